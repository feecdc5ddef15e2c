"""What the seventeenth session's tuning people (lorenzo, prudence, kai, anouk, soraya) lost, each in its general
form: a list or reminder request after a greeting or a sentence of news ("Morning! Could you add …?") was taken for
a question about memory, so nothing was stored, and "Quick one. Can you remind me at 5 to …?" read the reminders
back instead of setting one; a reminder's text ran on into the sentences after it; "please" closing the items was an
item; items after the list's name ("…list please, and also dark chocolate") were dropped; "has" of "has bought" and
"has been doing" keyed two facts alike, so the newer event superseded the older ("still", "can", "must" did the
same); "the Panda finally gave up on the A148" ended nothing (only "gave up <something>" did), "Halifax is off"
ended nothing; "quit the climbing wall lol" ended every fact saying "lol"; and "we moved. Utrecht now" kept the move
and lost where to."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.orm import Session

from services.act.fastpath import answers_from_memory, plain_action
from services.memory.changes import change_in, ended_things
from services.memory.facts import list_facts, parse_triple, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.identity import IDENTITY_SALIENCE
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.memory_builders import create_user
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)
ZONE = ZoneInfo("Europe/London")


@pytest.fixture
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id="pru")
        yield session
        session.rollback()


def _signals(text: str) -> dict:
    return collect_signals(RoutingContext(text=text))


def _action(text: str):  # type: ignore[no-untyped-def]
    return plain_action(text, _signals(text), NOW, ZONE)


@pytest.mark.parametrize(("text", "name", "items"), [
    ("Morning! Could you add oat milk and rye bread to my shopping list?", "shopping", ["oat milk", "rye bread"]),
    ("Right, the allotment. Can you create an allotment list with seed potatoes, netting and twine?", "allotment",
     ["seed potatoes", "netting", "twine"]),
    ("hiya. can u put batteries on the camping list?", "camping", ["batteries"]),
])
def test_a_list_request_after_a_greeting_or_news_is_stored_not_answered(routers: list[ModeRouter],  # noqa: F811
                                                                        text: str, name: str, items: list) -> None:
    assert routes(routers, text) == {("ACT", "list")}
    assert not answers_from_memory(text, _signals(text))  # it would have been answered as a question: no list
    action = _action(text)
    assert action is not None and action.arguments == {"operation": "add", "name": name, "items": items}


@pytest.mark.parametrize(("text", "task", "due"), [
    ("Quick one. Can you remind me at 5pm to ring the plumber?", "ring the plumber", "at 5pm"),
    ("Evening! Could you remind me tomorrow at 8 to put the bins out?", "put the bins out", "tomorrow at 8"),
])
def test_a_reminder_asked_after_a_greeting_is_set_not_read_back(text: str, task: str, due: str) -> None:
    action = _action(text)
    assert action is not None and action.arguments["operation"] == "create"
    assert (action.arguments["text"], action.arguments["due"]) == (task, due)


def test_a_question_about_reminders_after_a_greeting_still_reads_them() -> None:
    action = _action("Hi! What did I ask you to remind me about on Thursday?")
    assert action is not None and action.arguments == {"operation": "list"}


@pytest.mark.parametrize(("text", "task"), [
    ("Remind me on Monday at nine to take the cat for her jabs. She hides under the bed every time.",
     "take the cat for her jabs"),
    ("remind me friday at 6 to water the tomatoes. it's meant to be 30 degrees!", "water the tomatoes"),
])
def test_a_reminders_text_ends_with_its_sentence(text: str, task: str) -> None:
    action = _action(text)
    assert action is not None and action.arguments["text"] == task


def test_a_second_request_after_the_reminders_sentence_is_left_to_the_planner() -> None:
    assert _action("remind me at 5 to call mum. can you also add milk to my shopping list?") is None


@pytest.mark.parametrize(("text", "items"), [
    ("Could you start a seeds list with basil, chard and rocket, please?", ["basil", "chard", "rocket"]),
    ("add flour and yeast to my baking list please, and also caster sugar", ["flour", "yeast", "caster sugar"]),
    ("put nails on the shed list, plus wood glue", ["nails", "wood glue"]),
])
def test_politeness_is_no_item_and_items_after_the_lists_name_are_kept(text: str, items: list) -> None:
    action = _action(text)
    assert action is not None and action.arguments["items"] == items


def test_a_clause_after_the_lists_name_adds_nothing() -> None:
    action = _action("add eggs to my shopping list, and also it's for saturday")
    assert action is not None and action.arguments["items"] == ["eggs"]


@pytest.mark.parametrize("text", [
    "The user has bought a second-hand Toyota Yaris",
    "The user can swim",
    "The user must finish the thesis by June",
    "The user don't eat pork",
])
def test_a_tense_helper_or_a_modal_keys_no_fact(text: str) -> None:
    assert parse_triple(text).predicate is None


def test_an_adverb_before_the_verb_is_no_part_of_it_and_has_is_have() -> None:
    assert parse_triple("The user still lives in Leeds").predicate == "lives in"
    assert parse_triple("The user has two dogs").predicate == "have"


@pytest.mark.integration
def test_two_events_told_with_has_both_stay_true(session, hash_embedder) -> None:
    car = remember_fact(session, hash_embedder, "pru", "The user has bought a second-hand Toyota Yaris, red")
    remember_fact(session, hash_embedder, "pru", "The user has been doing a lot of pottery lately")
    remember_fact(session, hash_embedder, "pru", "The user can swim")
    remember_fact(session, hash_embedder, "pru", "The user can drive a minibus")
    texts = {fact.text for fact in list_facts(session, "pru")}
    assert "The user has bought a second-hand Toyota Yaris, red" in texts and car.action == "inserted"
    assert {"The user can swim", "The user can drive a minibus"} <= texts


@pytest.mark.integration
def test_a_car_that_gave_up_and_a_trip_that_is_off_end_what_they_were(session, hash_embedder) -> None:
    remember_fact(session, hash_embedder, "pru", "The user still drives the user's old green Skoda everywhere")
    remember_fact(session, hash_embedder, "pru", "We're driving to Cornwall for our summer trip in July")
    remember_fact(session, hash_embedder, "pru", "The user's lizard shed his skin lol")
    remember_fact(session, hash_embedder, "pru", "The Skoda finally gave up on the motorway last week")
    remember_fact(session, hash_embedder, "pru", "Change of plans, Cornwall is off, we're going to Skye instead")
    remember_fact(session, hash_embedder, "pru", "The user quit the pottery studio lol, got a job at the museum")
    texts = {fact.text for fact in list_facts(session, "pru")}
    assert not any("green Skoda" in text or "to Cornwall" in text for text in texts)
    assert "The user's lizard shed his skin lol" in texts  # "lol" is no thing that ended


@pytest.mark.parametrize(("text", "ended"), [
    ("My old laptop finally gave up yesterday", {"lapt"}),
    ("The wedding's off", {"wedd"}),
    ("The user finally gave up on the diet", {"diet"}),
    ("The user gave up smoking", {"smok"}),
    ("Friday is off", set()),
    ("The user is off to Spain", set()),
])
def test_what_gave_up_or_is_off_is_the_thing_named(text: str, ended: set) -> None:
    assert ended_things(text) == ended


def test_a_place_told_as_now_after_a_move_is_kept_with_it() -> None:
    said = "Big news: we moved. Bristol now, since the start of the month. My wife found a job at the zoo there."
    facts = [fact["text"] for fact in chunk_from_words(said)["facts"]]
    assert len(facts) == 1 and "Bristol now" in facts[0] and "zoo there" in facts[0]
    assert change_in(facts[0]) is not None and change_in(facts[0]).moved


@pytest.mark.integration
def test_a_part_told_again_with_now_replaces_the_old_value(session, hash_embedder) -> None:
    remember_fact(session, hash_embedder, "pru", "The user's gym day is the Tuesday, so the Tuesday the user rests")
    newer = remember_fact(session, hash_embedder, "pru", "Now the user's gym day is the Friday, not more the Tuesday")
    assert newer.action == "superseded"
    assert [fact.text for fact in list_facts(session, "pru")] == [
        "Now the user's gym day is the Friday, not more the Tuesday"]


def test_a_learners_work_like_is_their_job_kept_in_the_block_about_them() -> None:
    [fact] = chunk_from_words("I work like mechanic in a small garage near the station.")["facts"]
    assert fact["salience"] == IDENTITY_SALIENCE


@pytest.mark.parametrize("text", [
    "You were supposed to remind me of something on Friday morning. What was it?",
    "You had to remind me of one thing tonight, which was it?",
])
def test_a_reminder_asked_about_reads_the_reminders_after_any_earlier_turn(routers: list[ModeRouter],  # noqa: F811
                                                                           text: str) -> None:
    """"it" stands for the "something" before it, not for the turn before: with that turn there, "it" counted as a
    reference resolved by the conversation (RESPOND +1), and the question was answered from notes, wrongly."""
    earlier = [("What is on my garden list?", "Your garden list: tulip bulbs, bone meal and twine.")]
    for router in routers:
        for turns in ([], earlier):
            context = RoutingContext(text=text, embedding=router.embedder.embed(text) if router.embedder else None,
                                     working_memory=turns, context_warmth=1.0 if turns else 0.0)
            assert router.route(context).mode == "ACT", (text, turns)
    assert _action(text) is not None and _action(text).arguments == {"operation": "list"}
