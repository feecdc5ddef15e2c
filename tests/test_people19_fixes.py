"""What the people19 five (measured blind once at 80 %, changed 40 %) lost, each in its general form: "finally got rid
of the corolla!! picked up a Kia Niro yesterday" ended nothing and kept no new car (a sentence leaving out its "I"
before "picked up" told nothing); "Ugh, the swimming school changed its schedule, Mila's course is Thursdays now" was
no fact at all ("Ugh" was no lead-in, "Thursdays" no day: only "Thursday" was), so the old Tuesday stayed."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from services.memory.changes import change_in
from services.memory.facts import list_facts, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.refusals import refused_things
from services.memory.timewords import DATED
from tests.memory_builders import create_user


def _facts(said: str) -> list[str]:
    return [fact["text"] for fact in chunk_from_words(said)["facts"]]


def test_a_thing_got_rid_of_ends_and_the_one_picked_up_is_kept() -> None:
    facts = _facts("finally got rid of the fiesta!! picked up a Honda Jazz on Saturday, does 55 to the gallon.")
    assert facts == ["The user finally got rid of the fiesta",
                     "The user picked up a Honda Jazz on Saturday, does 55 to the gallon"]
    assert change_in(facts[0]) is not None and change_in(facts[0]).ended == {"fies"}


def test_a_day_said_with_now_moves_what_it_is_the_day_of() -> None:
    [fact] = _facts("Ugh, the dance school changed its timetable, Zoe's class is Wednesdays now.")
    assert fact == "The dance school changed its timetable, Zoe's class is Wednesdays now"
    change = change_in(fact)
    assert change is not None and {"zoe", "clas"} <= change.rescheduled
    assert change.ends("The user's daughter Zoe has her ballet class on Mondays after school")
    assert change_in("Choir is now on Fridays") is not None


@pytest.mark.parametrize("fact", ["The user's daughter is 7 now", "The user is tired now", "The user is off now"])
def test_now_without_a_day_moves_nothing(fact: str) -> None:
    assert change_in(fact) is None


def test_days_said_in_the_plural_are_days() -> None:
    assert DATED.search("her course is on tuesdays after school")
    assert not DATED.search("the sundae was lovely")


@pytest.fixture
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id="yus")
        yield session
        session.rollback()


@pytest.mark.integration
def test_the_car_got_rid_of_and_the_class_moved_are_not_kept(session, hash_embedder) -> None:
    remember_fact(session, hash_embedder, "yus", "The user drive a blue Ford Fiesta, 2012, she's dying tbh")
    remember_fact(session, hash_embedder, "yus", "The user's son Ali has his judo class on Tuesdays after school")
    for said in ("finally got rid of the fiesta!! picked up a Honda Jazz on Saturday, does 55 to the gallon.",
                 "Ugh, the club changed its schedule, Ali's judo class is Thursdays now."):
        for fact in _facts(said):
            remember_fact(session, hash_embedder, "yus", fact)
    texts = {fact.text for fact in list_facts(session, "yus")}
    assert not any("Ford Fiesta" in text or "on Tuesdays" in text for text in texts)
    assert "The user picked up a Honda Jazz on Saturday, does 55 to the gallon" in texts
    assert "The club changed its schedule, Ali's judo class is Thursdays now" in texts


@pytest.mark.parametrize(("fact", "refused", "still_offered"), [
    ("Please, whatever you do, never recommend the user horror films", {"horror"}, "film"),
    ("The user is not a fan of reality shows", {"reality"}, "show"),
    ("The user doesn't like spicy food", {"spicy"}, "food"),
])
def test_a_kind_after_what_qualifies_it_is_not_refused_whole(fact: str, refused: set, still_offered: str) -> None:
    assert refused <= refused_things(fact) and still_offered not in refused_things(fact)


def test_a_kind_refused_alone_is_refused() -> None:
    assert "film" in refused_things("The user hates films")
    assert {"mushroom", "olive"} <= refused_things("The user can't stand mushrooms and olives")
