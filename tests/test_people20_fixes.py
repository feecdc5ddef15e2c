"""What the people20 five (written blind, measured once at 39 %) lost to list handling, each in its general form: every
one of their five list questions was wrong, because no change said after a list's name and a colon was made."""

from __future__ import annotations

import datetime as dt

import pytest

from services.act.config import CriticConfig
from services.act.critic import Critic
from services.act.fastpath import plain_action
from services.act.list_edits import list_edits
from services.act.turn import INNATE_SKILLS
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def changes(text: str) -> list[tuple[str, str, list[str]]]:
    signals = collect_signals(RoutingContext(text=text))
    plain = plain_action(text, signals, NOW, dt.UTC)
    found = [plain] if plain is not None else list_edits(text, signals)
    return [(a.arguments["operation"], a.arguments["name"], a.arguments["items"]) for a in found]


@pytest.mark.parametrize(("text", "expected"), [
    # "<list>: remove X" was the list's items "remove corkscrews" and "organizers give to everybody", added.
    ("For Batumi list: remove corkscrews, organizers give to everybody. And add roll-up banner, Nino is design it",
     [("remove", "batumi", ["corkscrews"]), ("add", "batumi", ["roll-up banner"])]),
    # Jamaican English's "tek off" is "take off".
    ("salon list: tek off the relaxer, supplier nuh have none till next month. and add rat tail combs, we running low",
     [("remove", "salon", ["relaxer"]), ("add", "salon", ["rat tail combs"])]),
    ("camping list: please delete the gas stove", [("remove", "camping", ["gas stove"])]),
    # What follows "on it" says what the item is for.
    ("take the tarp off the cabin list, Gord next door lent me his. and put batteries on it for the radio while "
     "you're at it", [("remove", "cabin", ["tarp"]), ("add", "cabin", ["batteries"])]),
    # A list's items after its name and a colon are still added.
    ("Shopping list: milk, eggs, bread", [("add", "shopping", ["milk", "eggs", "bread"])]),
    ("packing list - passport, charger, dropper bottle",
     [("add", "packing", ["passport", "charger", "dropper bottle"])]),
])
def test_changes_said_after_a_lists_name_are_made(text: str, expected: list[tuple[str, str, list[str]]]) -> None:
    assert changes(text) == expected


@pytest.mark.parametrize("text", [
    "Who is it I support again?",  # fraser: answered "Which one do you mean?"
    "What is it I do for work again?",
    "where is it my sister lives now?",
    "who was it that I met at the fair last month?",
])
def test_a_cleft_question_about_their_own_life_is_answered(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """A cleft's "it" ("who is it I …") stands for the answer asked for, not for something said before."""
    assert routes(routers, text) == {("RESPOND", None)}


@pytest.mark.parametrize("text", ["What is it?", "Who was it?", "what was it again?"])
def test_it_alone_still_asks_what_it_is(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


TOLD_AND_KEPT_AWAY = ("Oh and I'm fixin to do taco night for the boys a lot more now I'm home evenings. Just so you "
                      "know I cannot stand cilantro, tastes like dish soap to me, keep it away from me")


@pytest.mark.parametrize("text", [TOLD_AND_KEPT_AWAY, "i'm allergic to cats so keep it away from me pls",
                                  "Keep that away from the kids, it's bleach."])
def test_keep_it_away_is_no_request_to_store(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """jolene (people21): routed ACT as "store it", her message became a "taco night" list of tacos, beans, steak."""
    assert routes(routers, text) != {("ACT", "memorize")} and all(mode != "ACT" for mode, _ in routes(routers, text))


@pytest.mark.parametrize("text", ["Keep this: the wifi password is Kettle42",
                                  "keep this on file: my NHS number is 485 777 2231"])
def test_keep_this_with_something_to_keep_still_stores(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("ACT", "memorize")}


def test_a_list_item_the_person_never_said_is_not_added_without_asking() -> None:
    SKILLS = {skill.name: skill for skill in INNATE_SKILLS}  # noqa: N806
    critic = Critic(CriticConfig(confirm_below=0.7))
    made_up = critic.assess(SKILLS["list"], {"operation": "add", "name": "taco night",
                                             "items": ["tacos", "beans", "steak"]}, TOLD_AND_KEPT_AWAY, NOW, dt.UTC)
    assert not made_up.run and any("steak" in reason for reason in made_up.reasons)
    said = critic.assess(SKILLS["list"], {"operation": "create", "name": "camp",
                                          "items": ["sleeping bag", "bug spray", "flashlight"]},
                         "Can you make a camp list for Wyatt with sleeping bag, bug spray and a flashlight", NOW,
                         dt.UTC)
    assert said.run
