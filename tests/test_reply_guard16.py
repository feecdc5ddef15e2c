"""What the person asked for holds for every reply: under the full profile too, on the ACT loop's clarifying turn, and
from the turn after they said it in the same thread.

Left by the fifteenth session: the reply guard (services/llm/guard.py) ran under the compact profile only, so a larger
model's "4:20 PM" reached a person who had asked for the 24-hour clock and its clarifying replies could promise what
was not done; the ACT loop's clarifying reply was never held to asking its question ("Sure, I'll remind you on
Friday." with nothing set); and a refusal told earlier in a thread counted only from the next thread.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.act.models import ScheduledItem
from services.memory.facts import remember_fact
from services.queues import MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from services.router.missing import question_for
from tests.llm_steps import Json, Reply, ToolCalls
from tests.test_act_chat import chat, message_of, person  # noqa: F401  (person: a fixture)
from tests.test_reminders_service import T0, add, fire, people, stream  # noqa: F401  (fire, people: fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("person")]

DINNER = "Give me an idea for a quick dinner tonight."


def said(frames) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """What the person was sent: the final message's text, and every delta streamed before it."""
    return message_of(frames)["text"], "".join(frame.data["text"] for frame in frames if frame.event == "delta")


def test_the_act_loops_clarifying_reply_asks_for_the_missing_detail_instead_of_promising(
        client, run_jobs, fake_llm, db_engine) -> None:
    """The skill lacks the time of day; the model's reply promises the reminder anyway. The person is asked for the
    time, and nothing is set."""
    fake_llm.script(ToolCalls([("schedule", {"operation": "create", "text": "call mum", "due": "friday"})]),
                    Json({"actions": []}), Reply("Sure, I'll remind you on Friday to call mum."))
    frames, _ = chat(client, run_jobs, "Remind me on Friday to call mum")
    text, deltas = said(frames)
    assert message_of(frames)["mode"] == "ACT"
    assert text == question_for("the time of day") and "I'll remind you" not in text
    with db_engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(ScheduledItem)) == 0
    # A reply that asks is the model's own.
    fake_llm.script(ToolCalls([("schedule", {"operation": "create", "text": "call mum", "due": "friday"})]),
                    Json({"actions": []}), Reply("What time on Friday should I remind you?"))
    frames, _ = chat(client, run_jobs, "Remind me on Friday to call mum")
    assert said(frames)[0] == "What time on Friday should I remind you?"


def test_under_the_full_profile_a_clarifying_reply_that_promises_is_replaced_by_the_question(
        client, run_jobs, fake_llm) -> None:
    fake_llm.script_stream(Reply("Sure, I'll add him to the list."))
    frames, _ = chat(client, run_jobs, "Put him on the list.")
    text, _ = said(frames)
    assert message_of(frames)["mode"] == "CLARIFY"
    assert "?" in text and "I'll add" not in text and "I don't have anything earlier" in text


def test_under_the_full_profile_the_24_hour_clock_asked_for_is_the_clock_of_the_reply(
        client, run_jobs, fake_llm, db_engine, hash_embedder, settings) -> None:
    question = "My flight lands at 3.20 in the afternoon and pickup is one hour after landing. What time is pickup?"
    fake_llm.script_stream(Reply("Pickup is at 4:20 PM."))
    frames, _ = chat(client, run_jobs, question)
    assert said(frames) == ("Pickup is at 4:20 PM.", "Pickup is at 4:20 PM.")  # nobody asked: as written
    with Session(db_engine) as session:
        remember_fact(session, hash_embedder, settings.default_user,
                      "The user wants all times in 24 hour format, am and pm is confusing")
        session.commit()
    fake_llm.script_stream(Reply("Pickup is at 4:20 PM, have a safe flight!"))
    frames, _ = chat(client, run_jobs, question)
    text, deltas = said(frames)
    assert text == "Pickup is at 16:20, have a safe flight!" and "4:20" not in deltas


def test_under_the_full_profile_a_refused_thing_is_not_offered(
        client, run_jobs, fake_llm, db_engine, hash_embedder, settings) -> None:
    with Session(db_engine) as session:
        remember_fact(session, hash_embedder, settings.default_user,
                      "The user can't stand mushrooms, never suggest them")
        session.commit()
    fake_llm.script_stream(Reply("How about a creamy mushroom risotto?"), Reply("How about a lemon pasta with peas?"))
    frames, _ = chat(client, run_jobs, DINNER)
    text, deltas = said(frames)
    assert text == "How about a lemon pasta with peas?" and "mushroom" not in deltas.lower()
    # The larger model is told too: the refusal is among the facts of its prompt.
    assert "can't stand mushrooms" in fake_llm.requests[-1]["messages"][0]["content"]


def test_a_scheduled_prompts_reply_is_on_the_24_hour_clock_asked_for(
        fire, worker_context, real_redis, fake_llm, hash_embedder) -> None:  # noqa: F811
    """A scheduled prompt's reply (a background ACT turn, no client listening) is held to the clock asked for."""
    with worker_context.sessions.begin() as session:
        remember_fact(session, hash_embedder, "ada", "The user wants all times in 24 hour format")
    fake_llm.script(Json({"actions": []}), Reply("Your train leaves at 4:20 PM."))
    add(worker_context, kind="prompt", text="When does my train leave today?")
    fire(T0)
    (event,) = stream(real_redis, "ada")
    assert event.data["reply"] == "Your train leaves at 16:20."


class TestCompact:
    @pytest.fixture
    def settings(self, settings):  # type: ignore[no-untyped-def]
        return replace(settings, llm_profile="compact")

    def test_a_refusal_told_earlier_in_the_thread_counts_from_the_next_turn(self, client, run_jobs, fake_llm) -> None:
        """Told in the thread's first turn (and stored by the chunker before the next), the refusal holds the second
        turn's reply: the offer of a mushroom risotto never reaches the person, the second offer does."""
        fake_llm.script_stream(Reply("Got it, no mushrooms."))
        _, thread = chat(client, run_jobs, "I can't stand mushrooms, please never suggest anything with them.")
        run_jobs((MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE))
        fake_llm.script_stream(Reply("How about a creamy mushroom risotto?"),
                               Reply("How about a lemon pasta with peas?"))
        frames, same = chat(client, run_jobs, DINNER, thread)
        text, deltas = said(frames)
        assert same == thread
        assert text == "How about a lemon pasta with peas?" and "mushroom" not in deltas.lower()
