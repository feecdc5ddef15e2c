"""The small model's ACT planner end to end: POST /chat → router → ACT → one constrained planning call → rows.

Under the small-model profile a request the fast path does not take ("throw bananas on the shopping list
too") is planned by one JSON call (services/act/small_plan.py) whose answer names one action. The scripted
OpenAI-protocol server answers that call as a model might: rightly, with invalid JSON, with an action no skill
has, with an action missing its content, or not at all. Every one ends in the right rows and a plain reply,
never in "I had trouble".
"""

from __future__ import annotations

from dataclasses import replace
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.act.small_plan import NOT_THAT, UNCLEAR
from services.db import Exchange
from services.llm.fallback import FALLBACK_REPLY
from tests.llm_steps import Error, Json, Reply
from tests.test_act_chat import chat, message_of, person  # noqa: F401  (person: a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("person")]  # a user in New York


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    """The small-model profile: the fast path, then the small planner."""
    return replace(settings, llm_profile="compact")


@pytest.fixture
def shopping(client, run_jobs, fake_llm, db_engine):  # type: ignore[no-untyped-def]
    """A shopping list with milk, eggs and bread (a fast-path command: no model call)."""
    chat(client, run_jobs, "Shopping list: milk, eggs, bread")
    assert fake_llm.requests == []
    return "shopping"


def shopping_items(db_engine) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    with db_engine.connect() as connection:
        return [tuple(row) for row in connection.execute(
            select(ListItem.text, ListItem.checked).join(NamedList).where(NamedList.name == "shopping")
            .order_by(ListItem.position))]


def planned(fake_llm) -> dict:  # type: ignore[no-untyped-def]
    """The one planning request of the turn, which must carry the answer's JSON schema."""
    assert len(fake_llm.requests) == 1, [r["messages"][-1] for r in fake_llm.requests]
    request = fake_llm.requests[0]
    assert request["response_format"]["type"] == "json_object"
    assert "list_add" in str(request["response_format"]["schema"])
    return request


def last_trail(db_engine) -> list[dict]:  # type: ignore[no-untyped-def]
    with db_engine.connect() as connection:
        return connection.execute(select(Exchange.tool_trail).order_by(Exchange.id.desc())).scalars().first()


def test_an_item_the_fast_path_does_not_take_is_added_by_the_planner(client, run_jobs, fake_llm, db_engine, shopping):
    fake_llm.script(Json({"do": "list_add", "list": "shopping", "items": ["bananas"]}))
    frames, _ = chat(client, run_jobs, "throw bananas on the shopping list too")
    message = message_of(frames)
    assert message["mode"] == "ACT" and not message.get("fallback")
    assert message["text"] == "Added bananas to your shopping list. It now has: milk, eggs, bread and bananas."
    assert shopping_items(db_engine)[-1] == ("bananas", False)
    request = planned(fake_llm)  # one call: no loop step after it, no model-written reply
    assert "- list shopping: milk, eggs, bread" in request["messages"][0]["content"]  # what exists, by name


def test_an_item_ticked_off_is_checked_and_the_reply_says_what_is_left(client, run_jobs, fake_llm, db_engine,
                                                                       shopping):
    fake_llm.script(Json({"do": "list_check", "list": "shopping list", "items": ["milk"]}))
    frames, _ = chat(client, run_jobs, "I got the milk, tick it off the shopping list")
    assert message_of(frames)["text"] == "Ticked off milk on your shopping list. Still on it: eggs and bread."
    assert shopping_items(db_engine) == [("milk", True), ("eggs", False), ("bread", False)]


def test_an_item_taken_off_and_another_added_in_one_message_are_both_done_without_the_model(
        client, run_jobs, fake_llm, db_engine, shopping):
    """"Take the glue gun off the costume list, my neighbour will lend me hers. And add safety pins." reached the
    planner, which takes one action a turn: it asked to confirm the removal, and the safety pins were never added."""
    frames, _ = chat(client, run_jobs, "Take the bread off the shopping list, my neighbour bakes on Fridays. "
                                       "And add oat milk.")
    assert fake_llm.requests == []
    assert message_of(frames)["text"] == ("Removed bread from your shopping list. Still on it: milk and eggs. "
                                          "Added oat milk to your shopping list. It now has: milk, eggs and oat milk.")
    assert shopping_items(db_engine) == [("milk", False), ("eggs", False), ("oat milk", False)]
    assert [entry["skill"] for entry in last_trail(db_engine) if entry.get("type") == "action"] == ["list", "list"]


def test_an_item_swapped_for_another_or_got_already_changes_the_list_without_the_model(
        client, run_jobs, fake_llm, db_engine, shopping):
    """"swap the eggs for tofu on my shopping list" and "I already got the bread, so take it off …" reached the
    planner, which asked to confirm removals the person had asked for."""
    frames, _ = chat(client, run_jobs, "swap the eggs for tofu on my shopping list")
    assert message_of(frames)["text"] == ("Removed eggs from your shopping list. Still on it: milk and bread. "
                                          "Added tofu to your shopping list. It now has: milk, bread and tofu.")
    frames, _ = chat(client, run_jobs, "I already got the bread, so take it off the shopping list")
    assert fake_llm.requests == []
    assert message_of(frames)["text"] == "Removed bread from your shopping list. Still on it: milk and tofu."
    assert shopping_items(db_engine) == [("milk", False), ("tofu", False)]


def test_a_reminder_is_cancelled_by_its_words(client, run_jobs, fake_llm, db_engine):
    chat(client, run_jobs, "remind me tomorrow at 9 to call mum")
    fake_llm.script(Json({"do": "reminder_cancel", "reminder": "call mum"}))
    frames, _ = chat(client, run_jobs, "cancel the reminder about calling mum")
    assert message_of(frames)["text"].startswith('Cancelled your reminder "call mum"')
    with db_engine.connect() as connection:
        assert connection.execute(select(ScheduledItem.text, ScheduledItem.status)).all() == [("call mum", "cancelled")]


@pytest.mark.parametrize(("message", "text", "rule", "weekday", "hour", "said"), [
    ("every morning at 7 remind me to take my vitamins", "take my vitamins", "FREQ=DAILY", None, 7,
     ("Done: I'll remind you every day, from ", ", to take your vitamins.")),
    ("please set up a reminder every Sunday at 6pm to plan the week", "plan the week", "FREQ=WEEKLY;BYDAY=SU", 6, 18,
     ("Done: I'll remind you every Sunday, from Sunday", ", to plan the week.")),
    ("remind me to water the plants every evening", "water the plants", "FREQ=DAILY", None, 19,
     ("Done: I'll remind you every day, from ", ", to water the plants.")),
])
def test_a_repeating_reminder_is_set_without_the_model(client, run_jobs, fake_llm, db_engine, message, text, rule,
                                                        weekday, hour, said):
    """A small model planned "every Sunday at 6pm" as a change to an existing reminder (bench.act_planner):
    the fast path sets it, repeating, from the words alone, first due at its hour (on its weekday)."""
    frames, _ = chat(client, run_jobs, message)
    assert fake_llm.requests == []
    reply = message_of(frames)["text"]
    assert reply.startswith(said[0]) and reply.endswith(said[1]) and "FREQ" not in reply
    with db_engine.connect() as connection:
        stored = connection.execute(select(ScheduledItem.text, ScheduledItem.recurrence, ScheduledItem.due_at,
                                           ScheduledItem.timezone)).all()
    assert [(row.text, row.recurrence) for row in stored] == [(text, rule)]
    first = stored[0].due_at.astimezone(ZoneInfo(stored[0].timezone))
    assert first.hour == hour and first.minute == 0 and weekday in (None, first.weekday())


@pytest.mark.parametrize("answer", [
    Reply("Sure! I have added bananas to your list."),  # no JSON at all (an endpoint that ignores the schema)
    Json({"do": "send_email", "to": "Tom"}),  # an action no skill has
    Json({"actions": [{"name": "list", "arguments": {"operation": "add"}}]}),  # the full planner's shape
    Json({"do": "list_add", "list": "shopping", "items": ["milk", "eggs"]}),  # the prompt's example, copied
    Json({"do": "forget", "memory": "my old address"}),  # ditto (the 0.5B's answer to "don't let me forget ...")
])
def test_an_unusable_answer_changes_nothing_and_says_what_engram_can_do(client, run_jobs, fake_llm, db_engine,
                                                                         shopping, answer):
    fake_llm.script(answer, answer)  # an invalid JSON answer is asked for once more
    frames, _ = chat(client, run_jobs, "throw bananas on the shopping list too")
    message = message_of(frames)
    assert (message["text"], bool(message.get("fallback"))) == (UNCLEAR, False)
    assert shopping_items(db_engine) == [("milk", False), ("eggs", False), ("bread", False)]
    assert not [entry for entry in last_trail(db_engine) if entry.get("type") == "action"]


def test_a_planner_that_fails_gets_no_apology(client, run_jobs, fake_llm, db_engine, shopping):
    fake_llm.script(Error(500), Error(500))
    frames, _ = chat(client, run_jobs, "throw bananas on the shopping list too")
    message = message_of(frames)
    assert message["text"] == UNCLEAR and message["text"] != FALLBACK_REPLY and not message.get("fallback")
    assert len(shopping_items(db_engine)) == 3


@pytest.mark.parametrize(("answer", "asked"), [
    (Json({"do": "list_add", "list": "shopping", "items": []}), "which items"),  # a write without its content
    (Json({"do": "list_add", "list": "shopping", "items": ["  "]}), "which items"),
    (Json({"do": "remind", "text": "renew my passport", "due": "sometime soon"}), "when"),  # a time that does not parse
    (Json({"do": "goal_update", "goal": "passport"}), "what changed"),  # an update that changes nothing
    (Json({"do": "list_add", "list": "list", "items": ["passport"]}), "the name of the list"),  # the skill asks
])
def test_an_action_without_what_it_needs_is_asked_about_and_writes_nothing(client, run_jobs, fake_llm, db_engine,
                                                                           shopping, answer, asked):
    fake_llm.script(answer)
    frames, _ = chat(client, run_jobs, "don't let me forget to renew my passport next Monday")
    message = message_of(frames)
    assert message["mode"] == "ACT" and asked in message["text"] and message["text"].endswith("Could you tell me?")
    with db_engine.connect() as connection:
        counts = [connection.execute(select(func.count()).select_from(model)).scalar_one()
                  for model in (ListItem, ScheduledItem, Goal)]
    assert counts == [3, 0, 0]


def test_a_request_no_skill_fits_gets_a_plain_reply(client, run_jobs, fake_llm, db_engine, shopping):
    fake_llm.script(Json({"do": "none"}))
    frames, _ = chat(client, run_jobs, "share my shopping list with Tom")
    assert message_of(frames)["text"] == NOT_THAT
    assert len(shopping_items(db_engine)) == 3


def test_an_item_not_on_the_list_is_answered_with_what_is_there(client, run_jobs, fake_llm, db_engine, shopping):
    fake_llm.script(Json({"do": "list_remove", "list": "shopping", "items": ["oat milk"]}))
    frames, _ = chat(client, run_jobs, "remove oat milk from my shopping list")
    text = message_of(frames)["text"]
    assert text.startswith("I couldn't do that: no item on the shopping list matching 'oat milk'")
    assert "milk, eggs and bread" in text
    assert len(shopping_items(db_engine)) == 3


def test_a_recall_the_model_cannot_word_is_answered_with_what_was_found(client, run_jobs, fake_llm, db_engine):
    chat(client, run_jobs, "Please remember this: the boiler was repaired by Gas Direct in October")
    fake_llm.script(Json({"do": "recall", "query": "boiler repair"}))
    fake_llm.script_stream(Error(500), Error(500))  # the reply the model should word from the findings fails twice
    frames, _ = chat(client, run_jobs, "find what I said about the boiler repair")
    message = message_of(frames)
    assert message["text"].startswith("Here is what I have on that:") and not message.get("fallback")
    assert "Gas Direct" in message["text"]
