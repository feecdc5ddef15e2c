"""Requests to the skills as learners and chat say them: "I want (to) make a list for party: …" made a list called
"to make a"; "I'd like to start a reading list with …" and "I need to make a packing list with …" were news to the
router; "Make for me a list of shopping: …" and a fact followed by the ask to keep it ("my locker code is 4411, save
that") were left to the planner model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.act.fastpath import plain_action
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)


def _action(text: str):  # type: ignore[no-untyped-def]
    return plain_action(text, collect_signals(RoutingContext(text=text)), NOW, UTC)


@pytest.mark.parametrize(("text", "name", "items"), [
    ("I want to make a list for party: cups, plates, napkins", "party", ["cups", "plates", "napkins"]),
    ("I want make a list for party: cups, plates, napkins", "party", ["cups", "plates", "napkins"]),
    ("Make for me a list of shopping: rice, oil, sugar", "shopping", ["rice", "oil", "sugar"]),
    ("i'd like to start a reading list with Dune and Emma", "reading", ["Dune", "Emma"]),
    ("I need to make a packing list with passport and socks", "packing", ["passport", "socks"]),
])
def test_a_list_made_as_learners_say_it_is_made_with_its_name_and_items(routers: list[ModeRouter], text: str,  # noqa: F811
                                                                        name: str, items: list[str]) -> None:
    assert routes(routers, text) == {("ACT", "list")}
    action = _action(text)
    assert action is not None
    assert action.arguments == {"operation": "add", "name": name, "items": items}


@pytest.mark.parametrize("text", ["I need to make a list of questions for the interview",
                                  "Make a list of five books I should read."])
def test_a_list_to_write_is_no_list_to_store(text: str) -> None:
    action = _action(text)
    assert action is None or action.skill != "list"


@pytest.mark.parametrize(("text", "fact"), [
    ("my locker code is 4411, save that", "my locker code is 4411"),
    ("Pin for the garage: 8812. Keep it for me", "Pin for the garage: 8812"),
    ("my passport number is X1234567, please remember it", "my passport number is X1234567"),
])
def test_a_fact_then_the_ask_to_keep_it_is_stored_as_said(routers: list[ModeRouter], text: str,  # noqa: F811
                                                          fact: str) -> None:
    assert routes(routers, text) == {("ACT", "memorize")}
    action = _action(text)
    assert action is not None and action.skill == "memorize" and action.arguments == {"text": fact}


def test_asking_whether_something_is_remembered_stores_nothing() -> None:
    action = _action("I love that song, remember it?")
    assert action is None or action.skill != "memorize"


@pytest.mark.parametrize("text", ["tell me one fact about owls", "give me one idea for a rainy Sunday"])
def test_one_counting_what_a_request_asks_for_points_at_nothing(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """"one" read as a pronoun sent the first to CLARIFY, whose guard asks "Which one do you mean?"."""
    assert routes(routers, text) == {("RESPOND", None)}


@pytest.mark.parametrize("text", ["give me one too", "I'll take the blue one"])
def test_one_standing_for_a_thing_said_before_still_does(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}
