"""Context assembly's per-person part: the narrative, the salient profile facts and the thoughts lately
shared, read in one statement besides recall's, each shown once, newest and most salient first."""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import replace

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from services.cognition.models import Autobiography, DriftGist
from services.db import User, insert
from services.memory.config import MemoryConfig
from services.memory.context import assemble
from services.memory.facts import remember_fact

pytestmark = pytest.mark.integration

NOW = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def session(db_engine):
    with Session(db_engine) as session:
        yield session
        session.rollback()


def _story(session: Session, user: str, text: str, days_ago: float) -> None:
    session.add(Autobiography(user_id=user, fire_id=f"auto-{days_ago}", narrative=text,
                              episodes_until=NOW, created_at=NOW - dt.timedelta(days=days_ago)))


def _thought(session: Session, user: str, text: str, days_ago: float, pushed: bool = True) -> None:
    session.add(DriftGist(user_id=user, fire_id=f"drift-{text}", text=text, memory_until=NOW,
                          pushed_event_id="1-0" if pushed else None, created_at=NOW - dt.timedelta(days=days_ago)))


def _statements(session: Session) -> list[str]:
    seen: list[str] = []
    event.listen(session.get_bind(), "before_cursor_execute",
                 lambda _conn, _cursor, statement, *_: seen.append(statement))
    return seen


def test_the_person_part_shows_the_newest_story_salient_facts_once_and_recent_shared_thoughts(session,
                                                                                             hash_embedder):
    session.execute(insert(User).values(id="alice").on_conflict_do_nothing())
    session.execute(insert(User).values(id="bob").on_conflict_do_nothing())
    _story(session, "alice", "Alice is a nurse who took up the cello.", days_ago=20)
    _story(session, "alice", "Alice is a nurse learning the cello; her daughter Mia starts school soon.", days_ago=2)
    _story(session, "bob", "Bob restores old scooters.", days_ago=1)
    remember_fact(session, hash_embedder, "alice", "The user's daughter is called Mia", salience=0.95)
    remember_fact(session, hash_embedder, "alice", "The user works night shifts as a nurse", salience=0.9)
    remember_fact(session, hash_embedder, "alice", "The user plays the cello", salience=0.85)
    remember_fact(session, hash_embedder, "alice", "The user once visited Oslo", salience=0.1)
    _thought(session, "alice", "Mia's first school day might feel big for both of you.", days_ago=0.5)
    _thought(session, "alice", "Cello practice could fit between night shifts.", days_ago=1)
    _thought(session, "alice", "Maybe try the Bach suites next.", days_ago=1.5)
    _thought(session, "alice", "A thought never pushed to her.", days_ago=0.2, pushed=False)
    _thought(session, "alice", "A thought shared weeks ago.", days_ago=20)
    _thought(session, "bob", "Bob's scooter parts arrived.", days_ago=0.1)
    session.flush()
    config = MemoryConfig()
    statements = _statements(session)

    context = assemble(session, hash_embedder, "alice", "When does Mia start school?", now=NOW, config=config)

    text = context.text
    assert "her daughter Mia starts school soon" in text and "took up the cello" not in text, "the newest story"
    assert text.count("daughter is called Mia") == 1, "a fact recall found is not repeated as a profile fact"
    assert "night shifts as a nurse" in text and "plays the cello" in text, "salient facts whatever the message"
    assert "Oslo" not in text, "a fact below the salience bar is not a profile fact"
    shown = [line for line in text.splitlines() if line.startswith("- ") and ("Mia's first" in line or "Cello practice"
                                                                                in line or "Bach" in line)]
    assert len(shown) == config.context.shared_thoughts == 2
    assert "Mia's first school day" in shown[0] and "Cello practice" in shown[1], "the newest shared thoughts first"
    assert "never pushed" not in text and "weeks ago" not in text
    assert "Bob" not in text and "scooter" not in text, "nothing of another person"
    profile_receipts = [r for r in context.receipts if r["kind"] == "fact"]
    assert len({r["id"] for r in profile_receipts}) == len(profile_receipts) == 3
    personal = [s for s in statements if "autobiographies" in s or "drift_gists" in s]
    assert len(personal) == 1 and "facts" in personal[0], "narrative, profile facts and thoughts: one statement"


def test_a_person_without_story_facts_or_thoughts_gets_no_person_part(session, hash_embedder):
    session.execute(insert(User).values(id="carol").on_conflict_do_nothing())
    session.flush()
    assert assemble(session, hash_embedder, "carol", "Hello there", now=NOW).text == ""


def test_the_personal_read_beside_recall_shows_what_the_read_after_it_shows(db_engine, hash_embedder):
    """``beside``: the personal read runs on its own connection during recall: same context, same receipts."""
    with Session(db_engine) as writer, writer.begin():  # committed: the side read has a connection of its own
        writer.execute(insert(User).values(id="dora").on_conflict_do_nothing())
        _story(writer, "dora", "Dora keeps bees and is learning Portuguese.", days_ago=1)
        remember_fact(writer, hash_embedder, "dora", "The user keeps three beehives", salience=0.95)
        remember_fact(writer, hash_embedder, "dora", "The user is learning Portuguese", salience=0.9)
        remember_fact(writer, hash_embedder, "dora", "The user's hives are on the roof", salience=0.85)
        _thought(writer, "dora", "The bees might swarm in May.", days_ago=0.5)
    threads: list[str] = []
    event.listen(db_engine, "before_cursor_execute", lambda *_: threads.append(threading.current_thread().name))
    with Session(db_engine) as session:
        after = assemble(session, hash_embedder, "dora", "How are my beehives doing?", now=NOW)
        threads.clear()
        beside = assemble(session, hash_embedder, "dora", "How are my beehives doing?", now=NOW, beside=True)
    assert beside.text == after.text and beside.receipts == after.receipts
    assert "three beehives" in beside.text and "learning Portuguese" in beside.text and "swarm in May" in beside.text
    assert beside.text.count("three beehives") == 1, "a fact recall shows is not repeated as a profile fact"
    assert any(name.startswith("recall-side") for name in threads), "the personal read ran on a side thread"


def test_the_small_model_notes_hold_the_persons_next_reminders_and_open_list_items_and_no_one_elses(session,
                                                                                                   hash_embedder):
    """"What do I need to do on Thursday?" and "What do I need to buy?" are answered from these lines."""
    from services.act.models import ListItem, NamedList, ScheduledItem

    for user in ("erin", "finn"):
        session.execute(insert(User).values(id=user).on_conflict_do_nothing())
    session.add_all([
        ScheduledItem(user_id="erin", text="call the insurance", due_at=dt.datetime(2026, 11, 26, 8, 30, tzinfo=dt.UTC),
                      timezone="Europe/Zurich"),
        ScheduledItem(user_id="erin", text="water the plants", due_at=NOW - dt.timedelta(hours=1)),  # past
        ScheduledItem(user_id="erin", text="old reminder", due_at=NOW + dt.timedelta(days=2), status="cancelled"),
        ScheduledItem(user_id="finn", text="finn's secret dentist", due_at=NOW + dt.timedelta(days=1)),
    ])
    shopping = NamedList(user_id="erin", name="shopping")
    theirs = NamedList(user_id="finn", name="shopping")
    session.add_all([shopping, theirs])
    session.flush()
    session.add_all([ListItem(list_id=shopping.id, text="charcoal", position=0),
                     ListItem(list_id=shopping.id, text="buns", position=1),
                     ListItem(list_id=shopping.id, text="ice", position=2, checked=True),
                     ListItem(list_id=theirs.id, text="finn's cake", position=0)])
    session.flush()
    notes = assemble(session, hash_embedder, "erin", "Is there something I need to do on Thursday?", now=NOW,
                     compact=True).text.splitlines()
    assert notes[-3:] == ["Set for later:",
                          "- reminder for Thursday 26 November 2026 at 09:30: call the insurance.",  # their time
                          "- your shopping list: charcoal, buns."]
    text = "\n".join(notes)
    assert "finn" not in text and "water the plants" not in text and "old reminder" not in text and "ice" not in text


def test_a_reminder_and_a_list_in_the_persons_own_words_are_said_to_them(session, hash_embedder):
    """"collect my boubou from the tailor, I need it for the baptême" was read by the 1.5B as its own errand ("I had to
    remind you about the baptism") in 2 of 4 replies; said to "you" as every note is, 1 of 4."""
    from services.act.models import ListItem, NamedList, ScheduledItem

    session.execute(insert(User).values(id="fatou").on_conflict_do_nothing())
    session.add(ScheduledItem(user_id="fatou", text="collect my boubou from the tailor, I need it for the baptême",
                              due_at=dt.datetime(2026, 11, 22, 18, 0, tzinfo=dt.UTC), timezone="Africa/Dakar"))
    errands = NamedList(user_id="fatou", name="errands")
    session.add(errands)
    session.flush()
    session.add_all([ListItem(list_id=errands.id, text="my I-beam order", position=0)])
    session.flush()
    notes = assemble(session, hash_embedder, "fatou", "What did you have to remind me about at 18h?", now=NOW,
                     compact=True).text.splitlines()
    assert notes[-2:] == [
        "- reminder for Sunday 22 November 2026 at 18:00: collect your boubou from the tailor, you need it for the "
        "baptême.",
        "- your errands list: your I-beam order."]


def test_the_small_models_block_about_the_person_is_the_same_on_every_turn_of_a_thread(session, hash_embedder):
    """The block goes in the system prompt, before the history: if it changed with the message, or with what
    was told since the thread began, llama.cpp would read the whole prompt again. What was told since is in
    the history the prompt shows (left out of the note too) or in the note."""
    from sqlalchemy import text as sql

    session.execute(insert(User).values(id="gwen").on_conflict_do_nothing())
    remember_fact(session, hash_embedder, "gwen", "The user works as a baker in Lyon", salience=0.9)
    remember_fact(session, hash_embedder, "gwen", "The user has a dog called Pixel", salience=0.9)
    remember_fact(session, hash_embedder, "gwen", "The user plays the violin in an orchestra", salience=0.3)
    remember_fact(session, hash_embedder, "gwen", "The user's sister Ana lives in Porto", salience=0.9,
                  source_exchange_id=4242)
    session.flush()
    started = NOW - dt.timedelta(minutes=30)
    session.execute(sql("UPDATE facts SET created_at = :before WHERE user_id = 'gwen'"),
                    {"before": started - dt.timedelta(days=3)})
    session.execute(sql("UPDATE facts SET created_at = :after WHERE user_id = 'gwen' AND text LIKE '%Ana%'"),
                    {"after": started + dt.timedelta(minutes=10)})  # told in this thread, turn 4242
    config = MemoryConfig()
    config = replace(config, context=replace(config.context, profile_facts=2, profile_min_salience=0.0,
                                             min_relevance=0.0))

    def ask(text: str, shown: list[int]):
        return assemble(session, hash_embedder, "gwen", text, now=NOW, config=config, compact=True,
                        known_at=started, shown_exchange_ids=shown, budget_tokens=300, note_tokens=100)

    violin, sister = ask("Which orchestra do I play the violin in?", [4242]), ask("Where does my sister live?", [4242])
    assert violin.about == sister.about
    assert "baker" in violin.about and "Pixel" in violin.about and "Ana" not in violin.about
    assert "violin" in violin.note and "violin" not in violin.about
    assert "Ana" not in sister.note, "told in the history the prompt shows"
    assert violin.text == f"{violin.about}\n{violin.note}"
    later = ask("Where does my sister live?", [])
    assert later.about == violin.about and "Ana" in later.note, "out of the history: recall's note has it"
    three = replace(config, context=replace(config.context, profile_facts=3))
    assert "Ana" in assemble(session, hash_embedder, "gwen", "Which orchestra?", now=NOW, config=three,
                             compact=True).about, "a new thread's block holds it"


def test_a_questions_best_facts_are_said_again_in_its_note_even_when_the_block_holds_them(session, hash_embedder):
    """Asked "What's my hobby these days?" with "you build model ships" in the block, the 1.5B answered "reading
    books": the note just before the question is where it looks. A statement's note does not repeat the block."""
    session.execute(insert(User).values(id="dora").on_conflict_do_nothing())
    remember_fact(session, hash_embedder, "dora", "The user has a dog called Pixel", salience=0.9)
    remember_fact(session, hash_embedder, "dora", "The user works as a baker in Lyon", salience=0.9)
    session.flush()
    config = MemoryConfig()
    config = replace(config, context=replace(config.context, profile_facts=2, profile_min_salience=0.0))

    def ask(text: str, again: int = 2):
        cfg = replace(config, context=replace(config.context, known_again=again))
        return assemble(session, hash_embedder, "dora", text, now=NOW, config=cfg, compact=True, budget_tokens=300,
                        note_tokens=100)

    question = ask("What is my dog called?")
    assert "Pixel" in question.about and "Pixel" in question.note
    assert "Pixel" not in ask("My dog called Pixel chewed a shoe today").note  # not a question
    assert "Pixel" not in ask("What is my dog called?", again=0).note


def test_who_the_person_is_stays_in_the_small_models_block_after_later_chatter(session, hash_embedder):
    """The block about the person holds twelve facts: the newest had pushed out "The user is originally from Enugu",
    told first, and "which city am I from?" was answered "New York". Facts from words saying who the person is (name,
    origin, home, work, family) now come before the newest others."""
    from services.memory.chunks import store_chunk
    from services.memory.from_words import chunk_from_words
    from tests.memory_builders import create_exchange

    said = ["I'm Ifeoma, I'm a pharmacist in Leeds. I'm originally from Onitsha but moved here in 2009.",
            *[f"My {thing} was a disaster again today" for thing in (
                "bus", "printer", "kettle", "meeting", "traffic", "lunch queue", "rota", "car park", "weather",
                "wifi", "post office", "school run", "laundry", "parking")]]
    session.execute(insert(User).values(id="ife").on_conflict_do_nothing())
    for minutes, text in enumerate(said):
        exchange = create_exchange(session, user_id="ife", user_text=text, reply="Ok!", thread_id="t-ife",
                                   occurred_at=NOW - dt.timedelta(hours=2) + dt.timedelta(minutes=minutes))
        store_chunk(session, hash_embedder, exchange, chunk_from_words(text), model="words")
    session.flush()
    config = MemoryConfig()
    config = replace(config, context=replace(config.context, profile_facts=12, profile_min_salience=0.0))
    about = assemble(session, hash_embedder, "ife", "Tell me a joke", now=NOW, config=config, compact=True,
                     budget_tokens=600).about
    assert "originally from Onitsha" in about and "pharmacist in Leeds" in about
    assert about.count("disaster again today") == 9  # others fill the rest
