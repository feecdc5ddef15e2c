"""Gaps the eighteenth session left, each in its general form: a day said with a part of the day ("on 25 march in
the evening") was read as "25 pm"; a deadline with "by" ("remind me to pay the rent by 25/03") was left to the planner;
a new job said plainly ("I am a nurse", "started as a barista") ended no old job; a new vet named in the sentence after
the old one retired ("Dr Pryce has retired … A young lad called Owen Bevan came out to see the ewes") was never
stored, so "who is my vet now?" was answered "Dr Pryce"; a gift swap said in one long sentence went to the planner; and
a refusal withdrawn mid-thread ("actually I eat fish again now") still held the reply until the next thread."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest
from sqlalchemy import text as sql
from sqlalchemy.orm import Session

from services.act.list_edits import list_edits
from services.act.models import ListItem, NamedList, ScheduledItem
from services.act.request_words import FAST_PATH
from services.memory.changes import change_in
from services.memory.config import MemoryConfig
from services.memory.context import assemble
from services.memory.facts import list_facts, parse_triple, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.job_titles import job_title
from services.router.mode_router import ModeRouter
from tests.act_fixtures import count, items
from tests.memory_builders import create_user
from tests.test_gaps18 import _action, _local, _store, _stored, ada, fast_path_turn  # noqa: F401,F811 - ada: test_act_loop's person
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

# NOW (tests/act_fixtures) is Tuesday 15 January 2030, 12:00 in the skill fixture's zone (Tokyo).

# --- 1. a day said with its part of the day ------------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("text", "task", "due"), [
    ("remind me on 25 march in the evening to call mum", "call mum", _local(2030, 3, 25, 19, 0)),
    ("Remind me to renew the insurance 25 March in the morning", "renew the insurance", _local(2030, 3, 25, 9, 0)),
    ("remind me on march 3 in the afternoon to book the MOT", "book the MOT", _local(2030, 3, 3, 15, 0)),
    ("remind me on 25/03 in the evening to pay the rent", "pay the rent", _local(2030, 3, 25, 19, 0)),
    ("remind me on Friday in the evening to water the plants", "water the plants", _local(2030, 1, 18, 19, 0)),
    ("remind me tomorrow afternoon to ring the school", "ring the school", _local(2030, 1, 16, 15, 0)),
    # a clock time said with the date keeps its own hour
    ("remind me on 25 march at 6 in the evening to call mum", "call mum", _local(2030, 3, 25, 18, 0)),
])
def test_a_day_said_with_a_part_of_the_day_is_that_day_at_the_parts_hour(skill, db_engine, text: str, task: str,
                                                                       due: dt.datetime) -> None:
    assert _store(skill, text).ok
    assert _stored(db_engine) == [(task, due)]


# --- 2. a deadline said with "by" -------------------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("text", "task", "due"), [
    ("remind me to pay the rent by 25/03", "pay the rent", _local(2030, 3, 25, 9, 0)),  # a day alone: its morning
    ("Remind me to send the form by 30/4/2031", "send the form", _local(2031, 4, 30, 9, 0)),
    ("remind me to return the books by friday", "return the books", _local(2030, 1, 18, 9, 0)),
    ("remind me to finish the report by 25 march at 5pm", "finish the report", _local(2030, 3, 25, 17, 0)),
])
def test_a_deadline_said_with_by_is_the_reminders_time(skill, db_engine, text: str, task: str,
                                                       due: dt.datetime) -> None:
    assert _store(skill, text).ok
    assert _stored(db_engine) == [(task, due)]


@pytest.mark.integration
def test_a_deadline_in_numbers_that_reads_two_ways_is_asked_about(skill, db_engine) -> None:
    result = _store(skill, "remind me to pay the rent by 12/03")
    assert not result.ok and result.error["code"] == "needs_info"
    assert "12 March" in result.error["missing"] and "3 December" in result.error["missing"]
    assert count(db_engine, ScheduledItem) == 0


def test_a_deadline_with_by_is_a_reminder_to_the_router(routers: list[ModeRouter]) -> None:  # noqa: F811
    assert routes(routers, "remind me to pay the rent by 25/03") == {("ACT", "schedule")}


def test_by_inside_the_task_is_no_time() -> None:
    action = _action("remind me to pay by card on friday")
    assert action is not None and action.arguments["text"] == "pay by card"


# --- 3. a new job said plainly ends the old one; a bare promotion does not ------------------------------------------

@pytest.fixture
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id="g19")
        yield session
        session.rollback()


def _told(session: Session, hash_embedder, *said: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The person's active facts after each message is read as the chunker reads it and stored."""
    for message in said:
        for fact in chunk_from_words(message)["facts"]:
            remember_fact(session, hash_embedder, "g19", fact["text"])
    return [fact.text for fact in list_facts(session, "g19")]


@pytest.mark.integration
@pytest.mark.parametrize(("said", "new"), [
    ("I am a nurse", "The user is a nurse"),
    ("I'm a plumber now", "The user is a plumber now"),
    ("I'm now a driving instructor", "The user is now a driving instructor"),
    ("I started as a barista at the Costa on the high street last week",
     "The user started as a barista at the Costa on the high street last week"),
    ("Just started work as a night porter at the Grand", "The user just started work as a night porter at the Grand"),
])
def test_a_new_job_said_plainly_ends_the_old_job(session, hash_embedder, said: str, new: str) -> None:
    texts = _told(session, hash_embedder, "I work as a QA tester in a small fintech startup",
                  "My dog is a samoyed called Snezhok", said)
    assert new in texts and "The user's dog is a samoyed called Snezhok" in texts
    assert not any("QA tester" in text for text in texts)


@pytest.mark.integration
@pytest.mark.parametrize("said", ["I got promoted", "I am a keen gardener", "I'm a dog owner", "I'm a senior",
                                  "My husband is a nurse"])
def test_news_that_names_no_new_job_of_the_persons_keeps_the_job(session, hash_embedder, said: str) -> None:
    # A bare promotion names no title to put in the old one's place: the old job stays until the title is said.
    texts = _told(session, hash_embedder, "I work as a QA tester in a small fintech startup", said)
    assert "The user work as a QA tester in a small fintech startup" in texts


@pytest.mark.parametrize(("fact", "title"), [("The user is a nurse", "nurse"),
                                            ("The user started as an apprentice at the garage", "apprentice"),
                                            ("The user is a retired teacher", None), ("The user got promoted", None)])
def test_the_job_a_fact_names(fact: str, title: str | None) -> None:
    assert job_title(fact.lower()) == title
    if title:
        assert parse_triple(fact).predicate == "work as"


# --- 4. who took over the part of someone who left ------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("before", "news", "newer", "gone"), [
    ("Our vet is Dr Pryce in Builth, we've been with him thirty years.",
     "Well, end of an era, Dr Pryce has retired, bless him. We're with the practice in Llandrindod now. A young lad "
     "called Owen Bevan came out to see the ewes last week and he seems very capable.",
     "The user's new vet is Owen Bevan", "Pryce"),
    ("My GP is Dr Hanrahan, she is lovely.",
     "Dr Hanrahan has retired. A new doctor named Sarah Lee saw me on Monday.", "The user's new GP is Sarah Lee",
     "Hanrahan"),
    ("Our builder Mick does all our repairs.",  # the part named in the leaving news itself
     "Our builder Mick has moved away. A chap called Tom Price came round to fix the roof.",
     "The user's new builder is Tom Price", "Mick"),
])
def test_someone_named_just_after_the_holder_of_a_part_left_holds_it(session, hash_embedder, before: str, news: str,
                                                                     newer: str, gone: str) -> None:
    texts = _told(session, hash_embedder, before, news)
    assert newer in texts
    assert not any(gone in text for text in texts)  # the old holder's facts, the leaving news with them, are history


@pytest.mark.integration
def test_who_is_my_vet_now_reads_the_new_vet(session, hash_embedder) -> None:
    _told(session, hash_embedder, "Our dog Nell is a border collie. Our vet is Dr Pryce in Builth, we've been with "
                                  "him thirty years.",
          "Well, end of an era, Dr Pryce has retired, bless him. A young lad called Owen Bevan came out to see the "
          "ewes.")
    config = MemoryConfig()
    config = replace(config, context=replace(config.context, profile_min_salience=0.0, min_relevance=0.0))
    prompt = assemble(session, hash_embedder, "g19", "Who's our vet now?", config=config, compact=True).text
    assert "Owen Bevan" in prompt and "Pryce" not in prompt


@pytest.mark.integration
@pytest.mark.parametrize("news", [
    "A young lad called Owen Bevan came out to see the ewes.",  # nobody left: a visitor, no vet
    "Dr Pryce has retired. My cousin called Owen was here.",  # no one doing anything for them
])
def test_someone_named_without_a_part_left_open_holds_none(session, hash_embedder, news: str) -> None:
    texts = _told(session, hash_embedder, "Our vet is Dr Pryce in Builth.", news)
    assert not any("new vet" in text for text in texts)


# --- 6. a refusal taken back mid-thread ----------------------------------------------------------------------------

@pytest.mark.parametrize(("refusal", "taken_back"), [
    ("The user don't eat fish", "Actually the user eat fish again now"),
    ("Please never recommend the user horror films", "The user do like horror films"),
    ("The user can't stand mushrooms", "The user is fine with mushrooms now"),
    ("The user is lactose intolerant, no dairy for the user", "The user is back on dairy"),
    ("The user hates horror films", "The user love horror films after all"),
])
def test_a_refusal_taken_back_ends_it(refusal: str, taken_back: str) -> None:
    change = change_in(taken_back)
    assert change is not None and change.ends(refusal)


@pytest.mark.parametrize(("refusal", "said"), [
    ("The user is vegetarian", "Actually the user eat fish again now"),  # fish is not the refusal's word: meat stays
    ("The user don't eat fish", "The user do like horror films"),  # another thing
    ("The user don't eat fish", "The user doesn't eat fish again"),  # a refusal said again takes nothing back
])
def test_what_takes_back_no_refusal_of_the_thing_ends_nothing(refusal: str, said: str) -> None:
    change = change_in(said)
    assert change is None or not change.ends(refusal)


@pytest.mark.integration
@pytest.mark.parametrize(("refusal", "taken_back", "thing", "question"), [
    ("I don't eat fish", "actually I eat fish again now", "fish", "What should I cook tonight?"),
    ("Please never recommend me horror films", "scratch that, I do like horror films", "horror",
     "Any film for tonight?"),
])
def test_a_refusal_taken_back_mid_thread_holds_the_reply_no_more(session, hash_embedder, refusal: str,
                                                                 taken_back: str, thing: str, question: str) -> None:
    [stored] = [text for text in _told(session, hash_embedder, refusal, "I work as a baker in Lyon") if thing in text]
    started = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=30)  # the thread began before the taking back
    session.execute(sql("UPDATE facts SET created_at = :before WHERE user_id = 'g19'"),
                    {"before": started - dt.timedelta(days=3)})
    config = MemoryConfig()
    config = replace(config, context=replace(config.context, profile_min_salience=0.0, min_relevance=0.0))

    def prompt():  # type: ignore[no-untyped-def]
        return assemble(session, hash_embedder, "g19", question, config=config, compact=True, known_at=started)

    before = prompt()
    assert thing in before.refused and thing in before.about  # told before the thread: it holds
    assert stored not in _told(session, hash_embedder, taken_back)
    after = prompt()
    assert thing not in after.refused  # the guard no longer writes it away
    assert thing not in after.about and "baker" in after.about  # the block's other facts stay as they stood


# --- 5. a swap said in one long sentence ----------------------------------------------------------------------------

NO_LIST_SWAP = ("Nikos doesn't want headphones anymore, he wants a gaming mouse, put that instead. And add perfume for "
                "my sister")


@pytest.mark.parametrize(("text", "name", "added"), [
    ("change of plan on the gifts: Nikos doesn't want headphones anymore, he wants a gaming mouse, put that instead. "
     "And add perfume for Despina to the gift list.", "gift", ["perfume for Despina"]),
    ("Nikos doesn't want headphones anymore, he wants a gaming mouse, put that on the gift list instead. And add "
     "perfume for my sister", "gift", ["perfume for my sister"]),
    ("Nikos no longer wants headphones, he'd rather have a gaming mouse, put that instead on my xmas list",
     "xmas", []),
])
def test_a_swap_told_of_whom_it_is_for_is_done_on_the_list_named(text: str, name: str, added: list) -> None:
    edits = list_edits(text, {"skill_list": 1.0})
    assert [edit.arguments for edit in edits] == [
        {"operation": "remove", "name": name, "items": ["headphones"]},
        {"operation": "add", "name": name, "items": ["gaming mouse"]},
        *({"operation": "add", "name": name, "items": added} for _ in added[:1])]


def test_a_swap_on_no_list_named_or_found_is_left_to_the_planner() -> None:
    text = "Nikos doesn't want headphones anymore, he wants a gaming mouse, put that instead."
    assert list_edits(text, {"skill_list": 1.0}) == []
    assert list_edits(text, {"skill_list": 1.0}, lambda item: None) == []


def test_a_swap_said_without_its_list_is_a_list_request_to_the_router(routers: list[ModeRouter]) -> None:  # noqa: F811
    text = NO_LIST_SWAP
    assert routes(routers, text) == {("ACT", "list")}


@pytest.mark.integration
def test_a_swap_said_without_its_list_is_done_on_the_list_holding_the_item(worker_context, ada,  # noqa: F811
                                                                            db_engine) -> None:
    with db_engine.begin() as connection:
        made = connection.execute(NamedList.__table__.insert().values(user_id="ada", name="christmas gift")
                                  .returning(NamedList.id)).scalar_one()
        for position, thing in enumerate(["football for Stavros", "headphones for Nikos", "scarf"], start=1):
            connection.execute(ListItem.__table__.insert().values(list_id=made, text=thing, position=position))
    outcome = fast_path_turn(worker_context, NO_LIST_SWAP)
    assert outcome.reason == FAST_PATH, outcome.trail  # not the planner's
    assert items(db_engine) == [("football for Stavros", False), ("scarf", False), ("gaming mouse", False),
                                ("perfume for my sister", False)]
