"""Changes told in words the change patterns did not read (probed in the lead's own words, sixteenth session): a
thing swapped or replaced ("swapped the Panda for a Jazz"), an identifier changed ("changed my phone number, it's now
…"), a home told with "now" ("the user is now living in Utrecht"). The old fact stayed standing beside the new one, and
the notes said both."""

from __future__ import annotations

import pytest

from services.memory.changes import change_in


def _ends(new: str, old: str) -> bool:
    change = change_in(new)
    return change is not None and change.ends(old)


@pytest.mark.parametrize(("new", "old"), [
    ("The user swapped the Panda for a Jazz", "The user drives a Fiat Panda"),
    ("The user traded in the user's bike for a scooter", "The user cycles to work on the user's bike"),
    ("The user replaced the old boiler with a heat pump", "The user's boiler is 20 years old"),
    ("The user changed the user's phone number, it's now 0612 3456", "The user's phone number is 0687 1122"),
    ("The user got a new email address: ana@post.nl", "The user's email address is ana@old.nl"),
    ("The user is now living in Utrecht", "The user lives in Rotterdam, in Kralingen"),
    ("We now live in Leeds", "The user lives in Bradford"),
])
def test_a_change_told_this_way_ends_the_old_fact(new: str, old: str) -> None:
    assert _ends(new, old)


@pytest.mark.parametrize(("new", "old"), [
    ("The user swapped shifts with Ana", "The user works night shifts"),  # with someone: nothing given up
    ("The user changed the user's mind about the trip", "The user is planning a trip to Rome"),
    ("The user replaced the old boiler with a heat pump", "The user's sister Ana has a heat pump"),
    ("The user is now living in Utrecht", "The user's brother lives in Rotterdam"),
])
def test_what_it_does_not_say_stays(new: str, old: str) -> None:
    assert not _ends(new, old)


@pytest.mark.parametrize("said", ["A lot has changed since last time.", "It really changed my view on helping others.",
                                  "I got a new lease of life.", "The sprinkles kinda changed the color this time."])
def test_talk_of_change_in_general_ends_nothing(said: str) -> None:
    change = change_in(said)
    assert change is None or not change.ended


def test_now_my_part_is_someone_named_ends_the_one_who_had_it() -> None:
    """"… sick for two months so now my instructor is Madame Sarr" left "Your instructor is Monsieur Ndiaye" in the
    notes (fatou, sixteenth session: facts true 48 of 50 with it)."""
    old = "The user's instructor is Monsieur Ndiaye, he is very patient with the user"
    assert _ends("Monsieur Ndiaye is sick for two months so now the user's instructor is Madame Sarr, she is strict",
                 old)
    assert _ends("Now the user's dentist is Dr Okafor", "The user's dentist is Dr Smith in Leeds")
    assert not _ends("Now the user's dentist is Dr Okafor", "The user's dentist is Dr Okafor, she is kind")
    assert not _ends("Right now the user's writing is consuming the user", "The user loves writing poems")
