"""Changes to a list told in one message are read without a model (services/act/list_edits.py)."""

from __future__ import annotations

import pytest

from services.act.list_edits import list_edits
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture


def edits(text: str) -> list[tuple[str, str, list[str]]]:
    found = list_edits(text, collect_signals(RoutingContext(text=text)))
    return [(edit.arguments["operation"], edit.arguments["name"], edit.arguments["items"]) for edit in found]


def test_an_item_taken_off_then_others_added_are_changes_to_the_same_list_in_order() -> None:
    assert edits("Take the glue gun off the costume list, my neighbour Latifa will lend me hers. And add safety "
                 "pins.") == [("remove", "costume", ["glue gun"]), ("add", "costume", ["safety pins"])]
    assert edits("remove the tent from the camping list and add a tarp") == [
        ("remove", "camping", ["tent"]), ("add", "camping", ["tarp"])]
    assert edits("take the bucket off the boat list. add an anchor and a battery to it") == [
        ("remove", "boat", ["bucket"]), ("add", "boat", ["anchor", "battery"])]
    assert edits("cross bread off my shopping list") == [("remove", "shopping", ["bread"])]
    assert edits("add milk to my shopping list and add eggs to the baking list") == [
        ("add", "shopping", ["milk"]), ("add", "baking", ["eggs"])]


def test_a_message_with_another_request_or_a_pointer_is_left_to_the_planner() -> None:
    assert edits("Take the glue gun off the costume list. Remind me at 5 to call mum.") == []
    assert edits("take the kids off the school run list and put them on mine") == []
    assert edits("add milk to my shopping list") == []  # one add: the fast path's own
    assert edits("add safety pins") == []  # no list named before


def test_items_swapped_scrapped_or_no_longer_needed_come_off_the_list() -> None:
    """Ways people take things off a list besides "remove": each reached the small-model planner, which takes one
    action a turn and asked to confirm a removal the person had asked for."""
    assert edits("swap the eggs for tofu on my shopping list") == [
        ("remove", "shopping", ["eggs"]), ("add", "shopping", ["tofu"])]
    assert edits("replace the charcoal with gas canisters on the camping list") == [
        ("remove", "camping", ["charcoal"]), ("add", "camping", ["gas canisters"])]
    assert edits("scrap the balloons from my party list") == [("remove", "party", ["balloons"])]
    assert edits("drop cake from the party list pls, mum is baking one") == [("remove", "party", ["cake"])]
    assert edits("no need for the tent on the camping list anymore") == [("remove", "camping", ["tent"])]
    assert edits("we don't need milk on the shopping list now") == [("remove", "shopping", ["milk"])]
    assert edits("the stove can come off the camping list, and add a tarp") == [
        ("remove", "camping", ["stove"]), ("add", "camping", ["tarp"])]


def test_it_after_a_thing_got_or_bought_is_that_thing() -> None:
    assert edits("I already got the charger, so take it off the packing list") == [("remove", "packing", ["charger"])]
    assert edits("bought the candles already, cross it off the party list") == [("remove", "party", ["candles"])]
    assert edits("I have thought about it, please take it off the reading list") == []  # "it" names nothing said


def test_talk_about_swapping_or_needing_is_no_change() -> None:
    assert edits("How do I replace values in a list in Python?") == []
    assert edits("swap the eggs for tofu in the recipe") == []  # no list named
    assert edits("I don't need a list for that") == []


@pytest.mark.parametrize("text", [
    "drop cake from the party list pls, mum is baking one",
    "no need for the tent on the camping list anymore",
    "we don't need milk on the shopping list now",
    "the stove can come off the camping list, and add a tarp",
    "replace the charcoal with gas canisters on the camping list",
])
def test_these_changes_route_to_act_with_the_list_skill(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """Each was answered as news or in prose, and the list stayed as it was."""
    assert routes(routers, text) == {("ACT", "list")}


@pytest.mark.parametrize("text", [
    "We don't need a shopping list when we eat out",
    "My sister can't come to the party, she's off the guest list drama anyway",
])
def test_talk_near_them_does_not(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert ("ACT", "list") not in routes(routers, text)
