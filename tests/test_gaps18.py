"""Gaps of the fast path and of memory's facts that the seventeenth session left, each in its general form: a
reminder's time said in the next sentence ("Remind me to call mum. Tomorrow at 9.") kept the period in its text; dates
in numbers ("on 25/03") and "in a few minutes" were left to the planner model, and "12/03" (12 March or 3 December?)
to its guess; items joined by "plus" or "and also" without a comma ("put tape on the party list plus balloons") were
left to the planner or stored as one item; and a new job title ("got promoted, … I'm QA lead now") stayed beside the
old job ("works as QA tester")."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.act.config import ActConfig, DueWords, load_act_config
from services.act.fastpath import plain_action
from services.act.models import ScheduledItem
from services.act.request_words import FAST_PATH
from services.act.turn import run_act_turn
from services.db import Thread, User
from services.memory.config import load_memory_config
from services.memory.facts import list_facts, remember_fact
from services.router.missing import question_for
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from services.zones import zone_of
from tests.act_fixtures import NOW, ZONE, count, items
from tests.memory_builders import create_user
from tests.test_act_loop import _turn, _understanding
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TOKYO = zone_of(ZONE)  # the skill fixture's person: NOW is Tuesday 15 January 2030, 12:00 in Tokyo


def _action(text: str, words: DueWords | None = None):  # type: ignore[no-untyped-def]
    return plain_action(text, collect_signals(RoutingContext(text=text)), NOW, TOKYO, words)


def _local(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=TOKYO).astimezone(dt.UTC)


def _stored(db_engine) -> list[tuple[str, dt.datetime]]:  # type: ignore[no-untyped-def]
    with db_engine.connect() as connection:
        return [(row.text, row.due_at) for row in connection.execute(select(ScheduledItem))]


def _store(skill, text: str, config: ActConfig | None = None):  # type: ignore[no-untyped-def]
    """The fast path's action for ``text``, run by the skill as a turn would; the skill's result."""
    action = _action(text, (config or ActConfig()).due)
    assert action is not None and action.skill == "schedule", text  # not left to the planner
    return skill("schedule", action.arguments, config=config)


# --- 1. the time in the next sentence ---------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("text", "task", "due"), [
    ("remind me to call mum. tomorrow at 9.", "call mum", _local(2030, 1, 16, 9, 0)),
    ("Remind me to water the plants. Friday at 6pm please.", "water the plants", _local(2030, 1, 18, 18, 0)),
    ("Can you remind me to renew my passport? Make it Monday at 10.", "renew my passport",
     _local(2030, 1, 21, 10, 0)),
    ("Please remind me to ring the school. Tomorrow morning. They close at 4.", "ring the school",
     _local(2030, 1, 16, 9, 0)),
    # ... or the hour of the day said with the request (which alone is that day's 9 a.m.)
    ("Remind me tomorrow to call mum. At 6pm.", "call mum", _local(2030, 1, 16, 18, 0)),
    ("Remind me on Friday to book the MOT. 10am please.", "book the MOT", _local(2030, 1, 18, 10, 0)),
    ("Remind me tomorrow to call mum. She is ill.", "call mum", _local(2030, 1, 16, 9, 0)),  # no time: the morning
])
def test_a_time_said_in_the_next_sentence_is_the_reminders(skill, db_engine, text: str, task: str,
                                                           due: dt.datetime) -> None:
    assert _store(skill, text).ok
    assert _stored(db_engine) == [(task, due)]


def test_a_request_after_the_time_sentence_is_left_to_the_planner() -> None:
    assert _action("Remind me to call mum. Tomorrow at 9. Also add milk to my shopping list.") is None


# --- 2. dates in numbers, "in a few minutes" -------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("text", "task", "due"), [
    ("remind me on 25/03 to pay the rent", "pay the rent", _local(2030, 3, 25, 9, 0)),  # a day alone: 9 a.m.
    ("Remind me to book the MOT on 03/25 at 3pm", "book the MOT", _local(2030, 3, 25, 15, 0)),
    ("remind me 14/01 at 8 to renew the insurance", "renew the insurance", _local(2031, 1, 14, 8, 0)),  # passed
    ("remind me to send the form on 30/4/2031 at 10am", "send the form", _local(2031, 4, 30, 10, 0)),
    ("remind me on 5/5 to call the garage", "call the garage", _local(2030, 5, 5, 9, 0)),  # the same either way
])
def test_a_date_in_numbers_whose_day_is_plain_is_set_on_it(skill, db_engine, text: str, task: str,
                                                           due: dt.datetime) -> None:
    assert _store(skill, text).ok
    assert _stored(db_engine) == [(task, due)]


@pytest.mark.integration
@pytest.mark.parametrize(("text", "readings"), [
    ("remind me 12/03 at 3pm to pay the rent", ("12 March", "3 December")),
    ("remind me on 4/6 to call the vet", ("4 June", "6 April")),
])
def test_a_date_in_numbers_that_reads_two_ways_is_asked_about_not_guessed(skill, db_engine, text: str,
                                                                         readings: tuple) -> None:
    result = _store(skill, text)
    assert not result.ok and result.error["code"] == "needs_info"
    assert all(reading in result.error["missing"] for reading in readings)  # the question names both
    assert count(db_engine, ScheduledItem) == 0


@pytest.fixture
def ada(db_engine):  # type: ignore[no-untyped-def]
    """The person of tests/test_act_loop.py's turns (its own ``person`` would replace the skill fixture's)."""
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert().values(id="ada", timezone="Europe/Berlin"))
        connection.execute(Thread.__table__.insert().values(id="thread-1", user_id="ada"))


def fast_path_turn(worker_context, text: str, signals: dict | None = None):  # type: ignore[no-untyped-def]
    """One ACT turn of ada's with the fast path on, as the digest runs it, routed by the text's own signals (and
    ``signals`` besides: what the digest adds to the router's)."""
    understanding = dataclasses.replace(_understanding(worker_context), signals=collect_signals(RoutingContext(
        text=text)) | (signals or {}))
    with worker_context.sessions.begin() as session:
        return run_act_turn(worker_context, _turn(text), understanding, session,
                            config=load_act_config(worker_context.settings.configs_dir),
                            memory=load_memory_config(worker_context.settings.configs_dir), fast_path=True)


@pytest.mark.integration
def test_a_turn_with_a_date_that_reads_two_ways_asks_which_and_stores_nothing(worker_context, ada, db_engine) -> None:
    outcome = fast_path_turn(worker_context, "Remind me on 12/03 to pay the rent")
    asked = question_for(outcome.missing or "")
    assert outcome.reason == FAST_PATH and "12 March" in asked and "3 December" in asked
    assert count(db_engine, ScheduledItem) == 0


def test_a_date_in_numbers_is_a_time_to_the_router(routers: list[ModeRouter]) -> None:  # noqa: F811
    assert routes(routers, "remind me on 25/03 to pay the rent") == {("ACT", "schedule")}
    assert not collect_signals(RoutingContext(text="add 1/2 a cup of sugar to the recipe list"))["has_time"]


@pytest.mark.integration
def test_in_a_few_minutes_is_the_configured_few_minutes(skill, db_engine) -> None:
    few = load_act_config(CONFIGS).due.a_few_minutes
    assert _store(skill, "remind me in a few minutes to take the bread out").ok
    assert _stored(db_engine) == [("take the bread out", NOW + dt.timedelta(minutes=few))]
    longer = dataclasses.replace(ActConfig(), due=DueWords(a_few_minutes=12.0))
    assert _store(skill, "Remind me to check the oven in a few minutes", longer).ok
    assert ("check the oven", NOW + dt.timedelta(minutes=12)) in _stored(db_engine)


# --- 3. items joined by "plus" or "and also" --------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("text", "name", "stored"), [
    ("put tape on the party list plus balloons", "party", ["tape", "balloons"]),
    ("add napkins to the party list and also candles", "party", ["napkins", "candles"]),
    ("add hooks to the garage list as well as a ladder", "garage", ["hooks", "ladder"]),
    ("add rope plus pegs and a mallet to my camping list", "camping", ["rope", "pegs", "mallet"]),
    ("add milk and also bread to the shopping list", "shopping", ["milk", "bread"]),
])
def test_items_joined_by_plus_or_and_also_are_each_an_item(skill, db_engine, text: str, name: str,
                                                           stored: list) -> None:
    action = _action(text)
    assert action is not None and action.arguments["name"] == name
    assert skill("list", action.arguments).ok
    assert items(db_engine) == [(item, False) for item in stored]


@pytest.mark.parametrize(("text", "expected"), [
    ("add Disney plus to my subscriptions list", ["Disney plus"]),  # a name ending in "plus" stays one
    ("add tape to the party list plus it's for saturday", ["tape"]),  # a clause, no item
])
def test_plus_ending_a_name_or_opening_a_clause_adds_no_item(text: str, expected: list) -> None:
    action = _action(text)
    assert action is not None and action.arguments["items"] == expected


def test_plus_before_a_second_request_is_left_to_the_planner() -> None:
    assert _action("put tape on the party list plus remind me at 5 to call mum") is None


# --- 4. a new job title replaces the job ------------------------------------------------------------

@pytest.fixture
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id="aig")
        yield session
        session.rollback()


@pytest.mark.integration
@pytest.mark.parametrize("newer", [
    "The user got promoted, from monday the user is QA lead",
    "The user is QA lead now",
    "The user was promoted to senior QA engineer last week",
    "The user's new role is head of QA",
    "The user is now a team lead at the startup",
    "My role is now test manager",
])
def test_a_new_job_title_replaces_the_old_job(session, hash_embedder, newer: str) -> None:
    remember_fact(session, hash_embedder, "aig", "The user work as qa tester in small fintech startup")
    remember_fact(session, hash_embedder, "aig", "The user's dog is a samoyed called Snezhok")
    assert remember_fact(session, hash_embedder, "aig", newer).action == "superseded"
    texts = [fact.text for fact in list_facts(session, "aig")]
    assert not any("qa tester" in text for text in texts)
    assert newer in texts and "The user's dog is a samoyed called Snezhok" in texts


@pytest.mark.integration
@pytest.mark.parametrize("newer", ["The user is now a grandmother", "The user is now vegetarian",
                                   "The user got promoted", "The user's job is boring now"])
def test_news_that_names_no_job_title_keeps_the_job(session, hash_embedder, newer: str) -> None:
    remember_fact(session, hash_embedder, "aig", "The user work as qa tester in small fintech startup")
    remember_fact(session, hash_embedder, "aig", newer)
    assert "The user work as qa tester in small fintech startup" in [fact.text for fact in list_facts(session, "aig")]
