"""Changes to a list told in one message are read without a model (services/act/list_edits.py)."""

from __future__ import annotations

from services.act.list_edits import list_edits
from services.router.signals import RoutingContext, collect_signals


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
