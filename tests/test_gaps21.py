"""Gaps the answers bench left (people who tell Engram things, then ask), each in its general form: a reminder for a day
and an event of it ("on Friday after my shift") went to the planner, which invented "5pm, repeating weekly" and asked;
a removal of "it" after a clause naming the thing with no comma ("ciara buys the toilet roll from now on so take it off
the … list") and an add after news ("The kettle broke, so add a new kettle to my shopping list") went to the planner;
a promotion kept the old rank beside the new; a move of people named with "are after moving" kept their old home;
and a reminder's text said back read "am I late?" as "am you late?"."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import select

from services.act.fastpath import plain_action
from services.act.list_edits import list_edits
from services.act.models import ScheduledItem
from services.act.request_words import FAST_PATH
from services.act.small_plan import to_call
from services.act.wording import plain_reply, said_back
from services.memory.changes import change_in
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from services.zones import zone_of
from tests.act_fixtures import NOW
from tests.test_gaps18 import TOKYO, ada, fast_path_turn  # noqa: F401 - ada: test_act_loop's person
from tests.test_gaps20 import _told, session  # noqa: F401 - session: a fixture
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


@pytest.mark.parametrize(("said", "kept"), [
    ("Remind me on Friday after my shift to ring the garage", None),
    ("remind me to ring the garage friday at 5", None),
    ("Remind me every Friday at 5 to ring the garage", "weekly"),
    ("remind me on Fridays at 5 to ring the garage", "weekly"),
])
def test_the_planner_sets_no_repeat_the_person_did_not_say(said: str, kept: str | None) -> None:
    answer = {"do": "remind", "text": "ring the garage", "due": "friday at 5pm", "repeat": "weekly"}
    call, missing = to_call(answer, said, NOW, TOKYO)
    assert call is not None and missing is None
    assert call.arguments.get("recurrence") == kept


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
    # "it", "them": which thing, the planner reads (never an item called "it")
    assert _action("I need flour, add it to my shopping list") is None
    assert _action("out of eggs, so put them on my shopping list") is None
    assert _action("add this week's magazine to my reading list").arguments["items"] == ["this week's magazine"]


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


# --- 4. a promotion ends the rank held before ----------------------------------------------------------------------

# The person of gaps20's memory tests (each test's session is rolled back): its `session` fixture and `_told`.


@pytest.mark.integration
@pytest.mark.parametrize(("held", "promoted", "new"), [
    ("Good evening po! Aurelio here, 3rd engineer on MV Kestrel Bay, container ship.",
     "Guess what!! Promoted na ako, 2nd engineer already from this month 🎉 Chief said I deserve it.", "2nd engineer"),
    ("Good evening po! Aurelio here, 3rd engineer on MV Kestrel Bay, container ship.",
     "Promoted na ako, 2nd engineer na!", "2nd engineer"),
    ("I am 3rd engineer on MV Kestrel Bay.", "I got promoted to 2nd engineer", "2nd engineer"),
    ("I'm a staff nurse on the cardiac ward.", "I was promoted to senior nurse last week", "senior nurse"),
])
def test_a_promotion_ends_the_rank_held_and_keeps_the_new_one(session, hash_embedder,  # noqa: F811
                                                             held: str, promoted: str, new: str) -> None:
    facts = _told(session, hash_embedder, held, promoted)
    titled = [fact for fact in facts if re.search(r"\b(?:engineer|nurse)\b", fact)]
    assert titled and all(new in fact for fact in titled), facts  # the old rank is history


def test_a_promotion_of_someone_else_or_without_a_title_ends_no_rank() -> None:
    held = "The user is 3rd engineer on MV Kestrel Bay"
    for said in ("The user's wife Marites got promoted to senior nurse", "The user promoted Sarah to manager",
                 "The user got promoted, chief said the user deserve it"):
        change = change_in(said)
        assert change is None or not change.ends(held), said
    assert not change_in("Promoted na ako, 2nd engineer na").ends("The user's wife Marites is a 3rd engineer")


# --- 5. people named moving ("are after moving home") end their old home ------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("moved", [
    "Shelley and Darren are after moving home, they moved into a place on St. John's Road",
    "Well b'y big news. Shelley and Darren are after moving home!",
    "Shelley's after moving to St. John's, Darren got on with the hospital",
])
def test_named_people_who_moved_have_no_old_home(session, hash_embedder, moved: str) -> None:  # noqa: F811
    facts = _told(session, hash_embedder, "My daughter Shelley lives in Fort McMurray with her husband Darren.",
                  "I live in Bonavista", moved)
    assert not any("Fort McMurray" in fact for fact in facts), facts
    assert any("Bonavista" in fact for fact in facts), facts  # the person's own home stays


def test_a_move_of_two_named_ends_both_homes_and_no_one_elses() -> None:
    change = change_in("Shelley and Darren are after moving home, they moved into a place on St. John's Road")
    assert change.ends("The user's daughter Shelley lives in Fort McMurray")
    assert change.ends("Darren lives in Fort McMurray")
    assert not change.ends("The user lives in Bonavista") and not change.ends("Marg lives in Bonavista")
    assert change_in("Shelley is after moving the sofa") is None  # moving a thing is no move of home


# --- 6. someone never named, in a wish too vague to act on (issue 31's rule; unchanged, pinned) ----------------------

@pytest.mark.parametrize("text", ["I want to do something with him this weekend",
                                  "book something for him this weekend"])
def test_someone_never_named_in_a_vague_wish_or_request_is_asked_about(routers: list[ModeRouter],  # noqa: F811
                                                                       text: str) -> None:
    assert {mode for mode, _ in routes(routers, text)} == {"CLARIFY"}
    assert collect_signals(RoutingContext(text=text))["unresolved_reference"]


@pytest.mark.integration
@pytest.mark.parametrize("text", ["remind me after work to call mum", "Remind me after dinner to ring the garage"])
def test_a_reminder_for_an_event_of_no_day_said_asks_the_time_and_sets_nothing(worker_context, ada,  # noqa: F811
                                                                                db_engine, text: str) -> None:
    """No day to take the morning of and no hour: asked, never guessed (the planner set "5pm")."""
    outcome = fast_path_turn(worker_context, text)
    assert outcome.reason == FAST_PATH and outcome.reply_mode == "CLARIFY", outcome.trail
    assert outcome.missing == "the time of day"
    with db_engine.connect() as connection:
        assert not list(connection.execute(select(ScheduledItem)))
