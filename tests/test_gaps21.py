"""Gaps the answers bench left (people who tell Engram things, then ask), each in its general form: a reminder for a day
and an event of it ("on Friday after my shift") went to the planner, which invented "5pm, repeating weekly" and asked;
a removal of "it" after a clause naming the thing with no comma ("ciara buys the toilet roll from now on so take it off
the … list") and an add after news ("The kettle broke, so add a new kettle to my shopping list") went to the planner;
a promotion kept the old rank beside the new; a move of people named with "are after moving" kept their old home;
and a reminder's text said back read "am I late?" as "am you late?"."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from services.act.fastpath import plain_action
from services.act.list_edits import list_edits
from services.act.models import ScheduledItem
from services.act.request_words import FAST_PATH
from services.act.wording import plain_reply, said_back
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from services.zones import zone_of
from tests.act_fixtures import NOW
from tests.test_gaps18 import TOKYO, ada, fast_path_turn  # noqa: F401 - ada: test_act_loop's person
from tests.test_lists21 import _lists, _on
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture


def _action(text: str):  # type: ignore[no-untyped-def]
    return plain_action(text, collect_signals(RoutingContext(text=text)), NOW, TOKYO)


def _local(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=TOKYO).astimezone(dt.UTC)


# --- 1. a reminder for a day and an event of it: that day, at a bare day's hour, said; never a repeat ---------------

@pytest.mark.parametrize(("text", "task", "due"), [
    ("Remind me on Friday after my shift to ring the garage", "ring the garage after my shift", "on friday at 9"),
    ("Remind me on Friday after my shift to pay Vikram's tuition fees, the centre closes at 7 and they charge late "
     "fee if I miss it", "pay Vikram's tuition fees after my shift, the centre closes at 7 and they charge late fee "
     "if I miss it", "on friday at 9"),
    ("remind me tomorrow when I get home to ring the garage", "ring the garage when I get home", "tomorrow at 9"),
    ("remind me after work on monday to call mum", "call mum after work", "on monday at 9"),
    ("remind me thursday once the kids are in bed to email the school", "email the school once the kids are in bed",
     "thursday at 9"),
    ("remind me to ring the garage on friday after my shift", "ring the garage after my shift", "on friday at 9"),
    # an hour said with it is kept
    ("Remind me on Friday at 6 after my shift to ring the garage", "ring the garage after my shift", "on friday at 6"),
    # as a day said alone is read
    ("Remind me on Friday to ring the garage", "ring the garage", "on friday at 9"),
])
def test_a_reminder_for_a_day_and_an_event_of_it_is_set_for_the_day_as_a_bare_day_is(text: str, task: str,
                                                                                     due: str) -> None:
    action = _action(text)
    assert action is not None and action.skill == "schedule", text  # not the planner's guess
    assert action.arguments["text"] == task
    assert action.arguments["due"] == due
    assert "recurrence" not in action.arguments  # never "weekly" unless said


@pytest.mark.parametrize("text", ["remind me tomorrow when I get home to ring the garage",
                                  "Remind me on Friday when I go to the gym to bring my towel",
                                  "Remind me on Friday after my shift to ring the garage"])
def test_a_reminder_for_a_day_and_an_event_of_it_is_a_reminder_to_the_router(routers: list[ModeRouter],  # noqa: F811
                                                                             text: str) -> None:
    assert routes(routers, text) == {("ACT", "schedule")}


def test_a_reminder_for_an_event_with_no_day_asks_its_time_not_its_text() -> None:
    signals = collect_signals(RoutingContext(text="Remind me when I get home to ring the garage"))
    assert signals["has_task"] and not signals["has_time"] and signals["slot_missing"]
    assert _action("Remind me when I get home to ring the garage") is None


@pytest.mark.integration
def test_a_reminder_after_my_shift_is_set_that_morning_and_says_so(worker_context, ada, db_engine) -> None:  # noqa: F811
    outcome = fast_path_turn(worker_context, "Remind me on Friday after my shift to ring the garage")
    assert outcome.reason == FAST_PATH and outcome.reply_mode != "CONFIRM", outcome.trail
    with db_engine.connect() as connection:
        rows = [(row.text, row.due_at, row.recurrence) for row in connection.execute(select(ScheduledItem))]
    assert [(text, recurrence) for text, _, recurrence in rows] == [("ring the garage after my shift", None)]
    due = rows[0][1].astimezone(zone_of(outcome.zone_name))
    assert (due.strftime("%A"), due.hour, due.minute) == ("Friday", 9, 0)  # the bare day's hour
    done = next(entry for entry in outcome.trail if entry.get("skill") == "schedule")
    assert "Friday" in plain_reply(done) and "09:00" in plain_reply(done)  # said
    assert plain_reply(done).endswith("to ring the garage after your shift.")


# --- 2. "so take it off": the thing the clause before named -----------------------------------------------------

@pytest.mark.parametrize(("text", "name", "item"), [
    ("ciara buys the toilet roll from now on so take it off the shopping list", "shopping", "toilet roll"),
    ("ok so we had a flat meeting finally lol. ciara buys the toilet roll from now on so take it off the flat stuff "
     "list", "flat stuff", "toilet roll"),
    ("mum is bringing the cake so take it off the party list", "party", "cake"),
    ("Tom has the charcoal, so cross it off the bbq list", "bbq", "charcoal"),
    ("I got the sunscreen already, so take it off the packing list", "packing", "sunscreen"),
])
def test_it_after_a_clause_naming_the_thing_is_that_thing(text: str, name: str, item: str) -> None:
    edits = [edit.arguments for edit in list_edits(text, {"skill_list": 1.0}, lambda thing: None)]
    assert edits == [{"operation": "remove", "name": name, "items": [item]}]


@pytest.mark.integration
def test_the_toilet_roll_bought_by_someone_else_comes_off_the_list(worker_context, ada, db_engine) -> None:  # noqa: F811
    _lists(db_engine, flat_stuff=["bin bags", "toilet roll", "washing up liquid"])
    outcome = fast_path_turn(worker_context, "ok so we had a flat meeting finally lol. ciara buys the toilet roll from "
                             "now on so take it off the flat stuff list", {"skill_list": 1.0})
    assert outcome.reason == FAST_PATH, outcome.trail
    assert _on(db_engine, "flat stuff") == ["bin bags", "washing up liquid"]


# --- 3. news, then "so add …" -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "item"), [
    ("The kettle broke, so add a new kettle to my shopping list", "new kettle"),
    ("It broke, so add a kettle to my shopping list", "kettle"),
    ("we ran out of milk so add milk to the shopping list", "milk"),
    ("The kettle broke, can you add a new kettle to my shopping list?", "new kettle"),
])
def test_an_add_after_news_is_a_plain_add(text: str, item: str) -> None:
    action = _action(text)
    assert action is not None
    assert action.arguments == {"operation": "add", "name": "shopping", "items": [item]}


def test_an_add_after_news_and_another_request_is_still_the_planners() -> None:
    assert _action("The kettle broke, so add a new kettle to my shopping list and remind me at 5 to call mum") is None


@pytest.mark.integration
def test_the_kettle_that_broke_goes_on_the_list(worker_context, ada, db_engine) -> None:  # noqa: F811
    _lists(db_engine, shopping=["milk"])
    outcome = fast_path_turn(worker_context, "The kettle broke, so add a new kettle to my shopping list")
    assert outcome.reason == FAST_PATH, outcome.trail
    assert _on(db_engine, "shopping") == ["milk", "new kettle"]


# --- 7. said back: the verb agrees with "you" ------------------------------------------------------------------

@pytest.mark.parametrize(("said", "back"), [
    ("check am I late?", "check are you late?"),
    ("Was I right about the date", "Were you right about the date"),
    ("I am late", "you are late"),
    ("I'm late, I was told", "you're late, you were told"),
    ("I wasn't told", "you weren't told"),
    ("send the form, it was late", "send the form, it was late"),  # not beside "I": as said
    ("renew my licence, I keep forgetting", "renew your licence, you keep forgetting"),
])
def test_a_reminder_said_back_agrees_with_you(said: str, back: str) -> None:
    assert said_back(said) == back
