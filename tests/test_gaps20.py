"""Gaps the people benches left, each in its general form: a question naming the thing a fact names in other words
("how did I mess up my knees, do you remember?") recalled the fact under ``min_relevance`` (a word the person never
said, and "do you remember", counted against it); a new holder of a part named without "called" ("Owen Bevan, the
new lad, came out", "the new one is Owen", "we've got a new vet now, Owen Bevan") was never the new vet; and a job
ended by a new one said as a past event."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from services.memory.config import MemoryConfig
from services.memory.context import assemble
from services.memory.lineterms import rewrite
from services.memory.recall import recall
from tests.memory_builders import create_user, facts_after

USER = "g20"


@pytest.fixture
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id=USER)
        yield session
        session.rollback()


def _told(session: Session, hash_embedder, *said: str) -> list[str]:  # type: ignore[no-untyped-def]
    return facts_after(session, hash_embedder, USER, said)


# --- 1. a question naming the thing a fact names, in words the person never said -----------------------------------

KNEES = ("anyway the real reason is I'm trying to get my life together a bit. doctor said my vitamin D is super low "
         "and I need to move more. but I hate running, my knees have been bad since I hurt them playing cricket in "
         "college, so please never suggest running or jogging")
AROUND = ["ok so hi, my cousin Neha uses this and she said it's actually decent at remembering stuff so here I am",
          "create a groceries list with eggs, paneer, spinach and almonds",
          "also my sister Kavya's wedding is on 12 February in Jaipur"]


@pytest.mark.integration
@pytest.mark.parametrize(("question", "found"), [
    ("how did I mess up my knees, do you remember?", "cricket"),
    ("what wrecked my knees again?", "cricket"),
    ("when is Kavya's wedding again, you remember?", "12 February"),
])
def test_a_fact_naming_the_asked_thing_reaches_the_note(session, hash_embedder, question: str, found: str) -> None:
    _told(session, hash_embedder, AROUND[0], KNEES, *AROUND[1:])
    config = MemoryConfig()  # min_relevance as configured: nothing lowered
    hits = recall(session, hash_embedder, USER, question, k=10, config=config, reinforce=False, kinds=("fact",))
    [hit] = [hit for hit in hits if found in hit.text]
    assert hit.signals["relevance"] >= config.context.min_relevance
    assert found in assemble(session, hash_embedder, USER, question, config=config, compact=True).note


@pytest.mark.integration
def test_asking_whether_the_assistant_remembers_finds_no_fact_about_remembering(session, hash_embedder) -> None:
    _told(session, hash_embedder, AROUND[0], KNEES, *AROUND[1:])
    config = MemoryConfig()
    hits = recall(session, hash_embedder, USER, "how did I mess up my knees, do you remember?", k=10, config=config,
                  reinforce=False, kinds=("fact",))
    assert not [hit for hit in hits if "Neha" in hit.text and hit.signals["relevance"] >= config.context.min_relevance]


@pytest.mark.integration
def test_a_fact_sharing_only_a_word_the_question_shares_with_every_turn_stays_out(session, hash_embedder) -> None:
    # The asked thing is one the person never named: their facts of other things stay below the line.
    _told(session, hash_embedder, AROUND[0], KNEES, *AROUND[1:])
    config = MemoryConfig()
    hits = recall(session, hash_embedder, USER, "what's the name of my goldfish?", k=10, config=config,
                  reinforce=False, kinds=("fact",))
    assert not [hit for hit in hits if hit.signals["relevance"] >= config.context.min_relevance]


@pytest.mark.parametrize(("question", "verb"), [
    ("how did I mess up my knees, do you remember?", "remember"),
    ("How many years I was working as pharmacist, you remember?", "remember"),
    ("how many years I have the bakery now, you know?", "know"),
    ("What is the name of my boy? I want to see if you remember", "remember"),
    ("can u recall where I parked the car", "recall"),
    ("do you still remember what my dog is called", "remember"),
])
def test_asking_the_assistants_memory_is_no_word_to_match(question: str, verb: str) -> None:
    assert verb not in rewrite(question).lower().split()


@pytest.mark.parametrize(("question", "verb"), [
    ("what did I remember to pack?", "remember"),  # the person's own remembering is what is asked about
    ("do you know anyone who knows Kavya?", "knows"),
])
def test_what_the_person_remembers_is_a_word_to_match(question: str, verb: str) -> None:
    assert verb in rewrite(question).lower().split()


# --- 2. who took over a part, named without "called" ---------------------------------------------------------------

VET = "Our vet is Dr Pryce in Builth, we've been with him thirty years."


@pytest.mark.integration
@pytest.mark.parametrize(("before", "news", "newer", "gone"), [
    (VET, "Well, end of an era, Dr Pryce has retired, bless him. Owen Bevan, the new lad, came out to see the ewes "
          "last week.", "The user's new vet is Owen Bevan", "Pryce"),
    (VET, "Dr Pryce has retired, bless him. The new one is Owen, he seems very capable.", "The user's new vet is Owen",
     "Pryce"),
    (VET, "Dr Pryce has retired. We've got a new vet now, Owen Bevan.", "The user's new vet is Owen Bevan", "Pryce"),
    (VET, "we've got a new vet now, Owen Bevan, lovely lad", "The user's new vet is Owen Bevan", "Pryce"),
    ("My GP is Dr Hanrahan, she is lovely.", "Dr Hanrahan has retired. Sarah Lee, the new doctor, saw me on Monday.",
     "The user's new GP is Sarah Lee", "Hanrahan"),
    ("Our builder Mick does all our repairs.",
     "Our builder Mick has moved away. Tom Price, a young chap from Leominster, fixed the roof.",
     "The user's new builder is Tom Price", "Mick"),
    ("My GP is Dr Hanrahan, she is lovely.", "Dr Hanrahan retired in May, the new one is Dr Sarah Lee.",
     "The user's new GP is Dr Sarah Lee", "Hanrahan"),
])
def test_someone_new_named_without_called_holds_the_part(session, hash_embedder, before: str, news: str, newer: str,
                                                          gone: str) -> None:
    texts = _told(session, hash_embedder, before, news)
    assert newer in texts
    assert not any(gone in text for text in texts)


@pytest.mark.integration
@pytest.mark.parametrize("news", [
    "Dr Pryce has retired. Owen Bevan, my nephew, came for tea on Sunday.",  # family visiting: no vet
    "Owen Bevan, the new lad, came out to see the ewes.",  # nobody left, no part named: a visitor
    "Dr Pryce has retired. The new one is a bit of a drive away.",  # no one named
    "Dr Pryce has retired. We got a new puppy now, Bramble.",  # a new thing of theirs, not the vet's part
])
def test_someone_named_without_a_part_left_to_them_holds_none(session, hash_embedder, news: str) -> None:
    texts = _told(session, hash_embedder, "Our dog is called Bramble. " + VET, news)
    assert not any("new vet" in text for text in texts)


@pytest.mark.integration
def test_the_new_one_ends_no_fact_that_only_says_one(session, hash_embedder) -> None:
    texts = _told(session, hash_embedder, "I have one sister, Mari.", VET, "Dr Pryce has retired. The new one is Owen.")
    assert "The user have one sister, Mari" in texts or any("one sister" in text for text in texts)


@pytest.mark.integration
def test_who_is_our_vet_now_reads_the_newcomer_named_without_called(session, hash_embedder) -> None:
    _told(session, hash_embedder, "Our dog Nell is a border collie. " + VET,
          "Dr Pryce has retired, bless him. Owen Bevan, the new lad, came out to see the ewes.")
    config = MemoryConfig()
    prompt = assemble(session, hash_embedder, USER, "Who's our vet now?", config=config, compact=True)
    assert "Your new vet is Owen Bevan" in prompt.text and "Pryce" not in prompt.about  # (the old message is history)


# --- 3. a job ended by a new one said as a past event --------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize(("said", "new"), [
    ("I handed in my notice at the bank, started at the school last week", "school"),
    ("I handed in my notice at the bank and started at the school last week", "school"),
    ("left the bank in March, started at the school last week", "school"),
    ("I quit the bank. Started at the school on Monday.", "school"),
    ("I started a new job at the school last week", "school"),
    ("Started my new job at the council on Monday!", "council"),
    ("I just started working at the school", "school"),
    ("Got a new job with the council, starting Monday", "council"),
])
def test_a_new_job_said_as_a_past_event_ends_the_old_one(session, hash_embedder, said: str, new: str) -> None:
    texts = _told(session, hash_embedder, "I work at the bank on George Street", "My dog is a samoyed called Snezhok",
                  said)
    assert any(new in text for text in texts) and "The user's dog is a samoyed called Snezhok" in texts
    assert not any("George Street" in text for text in texts)


@pytest.mark.integration
@pytest.mark.parametrize("said", [
    "I started a pottery class at the school last week",  # a pastime started, not a job
    "My sister started at the school last week",  # someone else's job
    "I started at the gym last week",  # a gym is no workplace
    "I got a new bike at the market",  # no job
])
def test_something_started_that_is_no_new_job_of_theirs_keeps_the_job(session, hash_embedder, said: str) -> None:
    texts = _told(session, hash_embedder, "I work at the bank on George Street", said)
    assert any("George Street" in text for text in texts)
