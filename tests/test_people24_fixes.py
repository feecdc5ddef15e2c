"""What the five people written blind as people24 (zsofia, mahmoud, bree, pasang, ines; 71 % at their one blind
measurement) lost in memory, each fixed in its general form."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from services.memory.changes import change_in
from services.memory.from_words import chunk_from_words
from services.memory.identity import IDENTITY_SALIENCE
from services.memory.refusals import refused_things
from tests.memory_builders import create_user, facts_after


def _facts(message: str) -> dict[str, float | None]:
    return {fact["text"]: fact.get("salience") for fact in chunk_from_words(message)["facts"]}


@pytest.mark.parametrize(("said", "kept"), [
    ("I wish to be well prepared for him, so please create a reading list with The Old Man and the Sea and Treasure "
     "Island, which I intend to read aloud with him.", "The user wish to be well prepared for him"),
    ("I'm off to the coast on Friday, could you add suncream and a towel to my packing list?",
     "The user is off to the coast on Friday"),
    ("We have guests on Sunday and please remind me to defrost the lamb.", "We have guests on Sunday"),
])
def test_a_request_after_what_is_told_is_no_fact(said: str, kept: str) -> None:
    """mahmoud's list as first made was kept as a fact; after a book was taken off the list, "which books are on my
    reading list?" was answered with the old three."""
    assert list(_facts(said)) == [kept]


@pytest.mark.integration
def test_a_list_changed_later_is_not_told_back_from_a_fact(db_engine, hash_embedder) -> None:
    said = ("My grandson Youssef will come to stay with us, and I wish to be well prepared for him, so please create "
            "a reading list with The Old Man and the Sea, Treasure Island and The Little Prince.",
            "And remove Treasure Island from the reading list, if you would. He has already read it twice.")
    with Session(db_engine) as session:
        create_user(session, user_id="p24-mahmoud")
        facts = facts_after(session, hash_embedder, "p24-mahmoud", said)
        assert facts and not [fact for fact in facts if "Treasure Island" in fact]
        session.rollback()


def test_a_long_introduction_keeps_what_comes_after_four_things() -> None:
    """mahmoud's name, age, home and wife took the four places a message had, and "we shall celebrate our anniversary
    on the 9th of March" was lost ("When is our wedding anniversary?" → "December 15")."""
    facts = _facts("Good evening. Allow me to introduce myself properly: my name is Mahmoud Fathy, I am sixty-one "
                   "years of age, and I live in Alexandria, in the Smouha district, with my wife Samira, who has "
                   "tolerated me for nearly thirty-five years. In fact we shall celebrate our anniversary on the 9th "
                   "of March, and I have not the faintest idea yet what to give her.")
    assert facts["The user's name is Mahmoud Fathy"] == IDENTITY_SALIENCE  # "properly:" was kept as "Properly: …"
    assert [fact for fact in facts if "anniversary on the 9th of March" in fact]


@pytest.mark.parametrize(("said", "kept"), [
    ("roommate jess has a hamster named nugget, honestly best part of this apartmnet",
     "The user's roommate jess has a hamster named nugget, honestly best part of this apartmnet"),
    ("flatmate Ola got a new job at the airport", "The user's flatmate Ola got a new job at the airport"),
    ("sister is moving to Cork in May", "The user's sister is moving to Cork in May"),
    ("boss just resigned, chaos at work", "The user's boss just resigned, chaos at work"),
])
def test_a_terse_message_without_its_my_is_kept_as_the_persons(said: str, kept: str) -> None:
    """bree's "roommate jess has a hamster named nugget" kept nothing, and "whats jess's hamster called" was answered
    "Buddy"."""
    assert list(_facts(said)) == [kept]


@pytest.mark.parametrize("said", ["Dad jokes are the best kind of jokes.", "Boss fights in this game are brutal."])
def test_a_kin_word_that_is_no_ones_is_not(said: str) -> None:
    assert not [fact for fact in _facts(said) if fact.startswith("The user's")]


@pytest.mark.parametrize(("said", "fact"), [
    ("hey im bree. 19, from winnipeg, first yr nursing at u of m",
     "The user is bree, 19, from winnipeg, first yr nursing at u of m"),
    ("Big change: I left the clinic. From last month I am animal keeper in the zoo of Nyíregyháza.",
     "From last month the user is animal keeper in the zoo of Nyíregyháza"),
    ("Since March I am bus driver for the city.", "Since March the user is bus driver for the city"),
    ("I am trekking guide in Pokhara, mostly Annapurna.", "The user is trekking guide in Pokhara, mostly Annapurna"),
])
def test_who_the_person_is_told_in_a_learners_or_a_texters_words(said: str, fact: str) -> None:
    """bree's introduction (lower case) and zsofia's new work (no article, after when it began) stayed out of the
    block about them: "what am i studying again" was answered with a midterm, "Where I am working now?" with her
    town."""
    assert _facts(said)[fact] == IDENTITY_SALIENCE


@pytest.mark.parametrize("said", ["I am tired in the morning.", "Since Monday I am off sick.", "I'm so happy here."])
def test_a_mood_or_a_state_is_not_who_the_person_is(said: str) -> None:
    assert IDENTITY_SALIENCE not in _facts(said).values()


def test_sweet_things_refused_are_desserts_too() -> None:
    """mahmoud ("please never suggest sweet things to me", diabetic) was offered "a light dessert, like a fruit tart or
    a banana split"."""
    refused = refused_things("Please never suggest sweet things to the user, however tempting they may be")
    assert {"dessert", "tart", "banana split"} <= refused
    assert "user" not in refused  # "… to the user" refuses no word "user"



@pytest.mark.parametrize(("said", "who"), [
    ("Rui finaly retired, so from now the padaria is the user and the user's nephew Tiago", "rui"),
    ("Dr Hanrahan has sadly retired", "hanrahan"),
    ("Holly has officially moved out", "holly"),
    ("Emily retired last month", "emily"),
])
def test_who_left_is_named_whatever_adverb_stands_between(said: str, who: str) -> None:
    """ines: "Rui finaly retired" had named "finaly" as who left (so the one after him in the padaria was never
    found)."""
    assert change_in(said).left == who
