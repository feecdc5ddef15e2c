"""What the people22 five (written blind, measured once at 86 %) lost to list handling, each in its general form:
three of their five list questions were wrong (twenty-first session)."""

from __future__ import annotations

import datetime as dt

import pytest

from services.act.config import CriticConfig
from services.act.critic import Critic
from services.act.turn import INNATE_SKILLS
from tests.test_people20_fixes import NOW, changes


@pytest.mark.parametrize(("text", "expected"), [
    # "bin" takes things off a list only with its object ("bin the relaxer"): "bin bags" is a thing, and the list
    # was never made ("I'm not sure what you'd like me to do there").
    ("can u create a flat stuff list with bin bags, toilet roll and washing up liquid",
     [("add", "flat stuff", ["bin bags", "toilet roll", "washing up liquid"])]),
    ("craft list: scrap paper, glue, glitter", [("add", "craft", ["scrap paper", "glue", "glitter"])]),
    ("make a party list with scratch cards and balloons", [("add", "party", ["scratch cards", "balloons"])]),
    ("salon list: bin the relaxer, supplier has none", [("remove", "salon", ["relaxer"])]),
])
def test_a_thing_named_like_a_removing_verb_is_an_item(text: str, expected: list) -> None:
    assert changes(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # Why, of the one it replaces: "one broke" was put on the bees list.
    ("Take the sugar off the bees list, my brother gave me 50 kilos. And add a queen excluder, one broke.",
     [("remove", "bees", ["sugar"]), ("add", "bees", ["queen excluder"])]),
    ("add a new veil to my bee list, mine tore", [("add", "bee", ["new veil"])]),
    ("add batteries, one charger and tape to the shopping list",  # "one charger" is a thing
     [("add", "shopping", ["batteries", "one charger", "tape"])]),
])
def test_why_a_thing_is_needed_is_no_item(text: str, expected: list) -> None:
    assert changes(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("The tailor messed up the red costume, the colour ran, so take the red costume off the recital list and put the "
     "gold costume instead, Meera's aunty is lending us hers, it fits her almost perfectly.",
     [("remove", "recital", ["red costume"]), ("add", "recital", ["gold costume"])]),
    ("The dog chewed it up, so cross the blue lead off the pet list and add a chain lead",
     [("remove", "pet", ["blue lead"]), ("add", "pet", ["chain lead"])]),
])
def test_a_change_after_news_and_so_is_made(text: str, expected: list) -> None:
    assert changes(text) == expected


def test_a_change_of_one_thing_to_another_is_made_without_asking() -> None:
    """mirela: "Please change the book to headphones on my Christmas presents list." was read as the removal and the
    addition, but the removal waited for a yes ("removes something the person did not ask to remove")."""
    lists = next(skill for skill in INNATE_SKILLS if skill.name == "list")
    said = ("Andrei has already too many books, my mother told me. So no book, I give him headphones. Please change "
            "the book to headphones on my Christmas presents list.")
    verdict = Critic(CriticConfig(confirm_below=0.7)).assess(
        lists, {"operation": "remove", "name": "christmas presents", "items": ["book"]}, said, NOW, dt.UTC)
    assert verdict.run
    unasked = Critic(CriticConfig(confirm_below=0.7)).assess(
        lists, {"operation": "remove", "name": "christmas presents", "items": ["book"]},
        "The book for Andrei is a good one, he loves reading.", NOW, dt.UTC)
    assert not unasked.run
