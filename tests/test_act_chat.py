"""ACT end to end: POST /chat → digest job → router picks ACT → loop with scripted tool calls → stored turn."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.db import Exchange, User
from services.memory.models import Fact
from services.queues import PROMPT_QUEUE
from tests.llm_steps import Json, Reply, ToolCalls
from tests.sse import parse_frames

pytestmark = pytest.mark.integration

ZONE = "America/New_York"
DONE = Json({"actions": []})


def post_chat(client, text, thread_id=None):
    body = {"text": text, **({"thread_id": thread_id} if thread_id else {})}
    return client.post("/chat", data=json.dumps(body), content_type="application/json", buffered=False)


def chat(client, run_jobs, text, thread_id=None):
    """One message through the whole pipeline; returns (frames, thread_id)."""
    response = post_chat(client, text, thread_id)
    run_jobs((PROMPT_QUEUE,))
    frames = [frame for frame in parse_frames(response.response) if not frame.comment]
    return frames, response.headers["X-Thread-ID"]


def message_of(frames):
    return next(frame.data for frame in frames if frame.event == "message")


@pytest.fixture
def person(settings, db_engine):
    """The default user, living in New York."""
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert().values(id=settings.default_user, timezone=ZONE))
    return settings.default_user


def tomorrow_at(hour: int) -> dt.datetime:
    zone = ZoneInfo(ZONE)
    tomorrow = dt.datetime.now(zone).date() + dt.timedelta(days=1)
    return dt.datetime.combine(tomorrow, dt.time(hour), tzinfo=zone).astimezone(dt.UTC)


def test_remind_me_tomorrow_at_9_stores_the_right_utc_time(client, run_jobs, fake_llm, db_engine, person):
    fake_llm.script(
        ToolCalls([("schedule", {"operation": "create", "text": "Call the dentist", "due": "tomorrow at 9"})]),
        DONE,
        Reply("Done: I'll remind you tomorrow at 9:00 to call the dentist."),
    )
    frames, _ = chat(client, run_jobs, "Remind me tomorrow at 9 to call the dentist")
    message = message_of(frames)
    assert message["mode"] == "ACT"
    assert message["metrics"]["tools"] == {"schedule": 1}
    assert {"stage": "acting", "skill": "schedule"} in [f.data for f in frames if f.event == "status"]
    with db_engine.connect() as connection:
        item = connection.execute(select(ScheduledItem)).one()
        exchange = connection.execute(select(Exchange)).one()
    assert item.due_at == tomorrow_at(9)
    assert (item.text, item.kind, item.status, item.timezone) == ("Call the dentist", "reminder", "active", ZONE)
    assert item.created_request_id == exchange.request_id
    actions = [entry for entry in exchange.tool_trail if entry["type"] == "action"]
    assert actions[0]["skill"] == "schedule" and actions[0]["ok"] is True
    assert actions[0]["result"]["created"]["due_local"].endswith("T09:00-05:00") or \
        actions[0]["result"]["created"]["due_local"].endswith("T09:00-04:00")
    assert exchange.tool_trail[-1]["type"] == "end" and exchange.tool_trail[-1]["reason"] == "no_actions"


def test_shopping_list_add_then_ask(client, run_jobs, fake_llm, db_engine, person):
    fake_llm.script(
        ToolCalls([("list", {"operation": "add", "name": "shopping", "items": ["milk"]})]), DONE,
        Reply("Added milk to your shopping list."),
    )
    frames, thread_id = chat(client, run_jobs, "Add milk to my shopping list")
    assert message_of(frames)["mode"] == "ACT" and message_of(frames)["metrics"]["tools"] == {"list": 1}
    with db_engine.connect() as connection:
        rows = connection.execute(select(NamedList.name, ListItem.text).join(ListItem)).all()
    assert rows == [("shopping", "milk")]

    fake_llm.script(
        ToolCalls([("list", {"operation": "view", "name": "shopping list"})]), DONE,
        Reply("Your shopping list has: milk."),
    )
    frames, _ = chat(client, run_jobs, "What's on my shopping list?", thread_id)
    assert message_of(frames)["mode"] == "ACT" and "milk" in message_of(frames)["text"]
    reply_prompt = fake_llm.requests[-1]["messages"][0]["content"]
    assert '"items":[{"text":"milk","checked":false}]' in reply_prompt  # the trail reached the reply prompt


def asked_then_confirmed(client, run_jobs, fake_llm, db_engine, text, call, model, reply):  # type: ignore[no-untyped-def]
    """The model plans ``call`` for ``text``; the critic asks first (nothing of ``model`` stored), then "yes"."""
    fake_llm.script(ToolCalls([call]))
    frames, thread_id = chat(client, run_jobs, text)
    assert message_of(frames)["mode"] == "ACT"
    question = message_of(frames)["text"]
    assert question.startswith("Before I do that, please confirm")
    with db_engine.connect() as connection:
        assert connection.execute(select(model)).all() == []
    fake_llm.script(Reply(reply))
    frames, _ = chat(client, run_jobs, "yes", thread_id)
    assert message_of(frames)["mode"] == "ACT"  # the router knows a confirmation is pending
    return question, frames


def test_low_confidence_reminder_waits_for_yes(client, run_jobs, fake_llm, db_engine, person):
    # The model gets the hour wrong: the critic asks instead of storing a 10:00 reminder.
    call = ("schedule", {"operation": "create", "text": "call the dentist", "due": "tomorrow at 10"})
    question, frames = asked_then_confirmed(client, run_jobs, fake_llm, db_engine,
                                            "Remind me tomorrow at 9 to call the dentist", call, ScheduledItem,
                                            "Okay, the reminder is set for tomorrow at 10:00.")
    assert "tomorrow at 10" in question
    assert message_of(frames)["metrics"]["tools"] == {"schedule": 1}
    with db_engine.connect() as connection:
        item = connection.execute(select(ScheduledItem)).one()
        trail = connection.execute(select(Exchange.tool_trail).order_by(Exchange.id.desc())).scalars().first()
    assert item.due_at == tomorrow_at(10)
    assert trail[0]["type"] == "confirmation" and trail[0]["decision"] == "confirmed"
    assert trail[-1]["reason"] == "confirmed"


def test_a_message_sent_mid_turn_is_folded_into_the_running_loop(client, run_jobs, fake_llm, db_engine, person):
    fake_llm.script(
        ToolCalls([("list", {"operation": "add", "name": "shopping", "items": ["milk"]})]),
        ToolCalls([("list", {"operation": "add", "name": "shopping", "items": ["eggs"]})]),
        DONE,
        Reply("Added milk and eggs to your shopping list."),
    )
    first = post_chat(client, "Add milk to my shopping list")
    first.close()  # two open streams of one test client would interleave their request contexts
    second = post_chat(client, "Also add eggs", first.headers["X-Thread-ID"])  # before the first is processed
    second.close()
    run_jobs((PROMPT_QUEUE,))
    first_frames, second_frames = (
        [f for f in parse_frames(client.get(f"/chat/{r.headers['X-Request-ID']}/events").response) if not f.comment]
        for r in (first, second))

    assert message_of(first_frames)["metrics"]["tools"] == {"list": 2}
    assert [f.event for f in second_frames] == ["status", "status", "message", "done"]
    assert second_frames[1].data["stage"] == "folded"
    assert second_frames[1].data["into"] == first.headers["X-Request-ID"]
    folded = message_of(second_frames)
    assert folded["folded_into"] == first.headers["X-Request-ID"]
    assert folded["text"] == "Added milk and eggs to your shopping list."
    assert "Sent while you were working on it:\n- Also add eggs" in fake_llm.requests[1]["messages"][1]["content"]
    assert len(fake_llm.requests) == 4  # the folded message got no turn of its own
    with db_engine.connect() as connection:
        items = connection.execute(select(ListItem.text).order_by(ListItem.position)).scalars().all()
        exchanges = connection.execute(select(Exchange.request_id, Exchange.tool_trail, Exchange.user_text)).all()
    assert items == ["milk", "eggs"]
    assert [row.request_id for row in exchanges] == [first.headers["X-Request-ID"]]
    assert exchanges[0].user_text.endswith("\nAlso add eggs")  # the steered words are part of the turn
    steering = [entry for entry in exchanges[0].tool_trail if entry["type"] == "steering"]
    assert steering == [{"type": "steering", "request_id": second.headers["X-Request-ID"], "text": "Also add eggs",
                         "iteration": 1}]


def test_please_store_this_reaches_act_and_keeps_one_memory_item(client, run_jobs, fake_llm, db_engine, person):
    # Issue 31: a request to store a given piece of information used to be answered, not acted on.
    fake_llm.script(ToolCalls([("memorize", {"text": "My bike lock combination is 0347"})]), DONE,
                    Reply("Stored: your bike lock combination is 0347."))
    frames, _ = chat(client, run_jobs, "Could you please store this: my bike lock combination is 0347.")
    assert message_of(frames)["mode"] == "ACT" and message_of(frames)["metrics"]["tools"] == {"memorize": 1}
    with db_engine.connect() as connection:
        facts = connection.execute(select(Fact.text, Fact.speaker)).all()
    assert facts == [("My bike lock combination is 0347", "user")]


def test_a_goal_the_model_words_differently_is_confirmed_before_it_is_stored(client, run_jobs, fake_llm, db_engine,
                                                                             person):
    call = ("goal", {"operation": "create", "text": "Floss daily before bed"})
    question, frames = asked_then_confirmed(client, run_jobs, fake_llm, db_engine,
                                            "Please keep track of a new goal for me: floss every night.", call, Goal,
                                            "Your flossing goal is recorded.")
    assert "Floss daily before bed" in question and message_of(frames)["metrics"]["tools"] == {"goal": 1}
    with db_engine.connect() as connection:
        goals = connection.execute(select(Goal.text, Goal.state)).all()
    assert goals == [("Floss daily before bed", "active")]
