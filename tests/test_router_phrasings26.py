"""Issue 31's twenty-sixth round: the kinds of message routing_tuning27's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# A request to create something (start, create, begin, open) cut off on a word that waits for more: with what?
CREATING_CUT_OFF = [
    "Start a list for the camping trip with",
    "Create a packing list for Rome with",
    "Begin a to-do list for the house move with",
    "Open a new list for the school run with",
    "Please start a shopping list for Sunday lunch with",
    "Could you create a reading goal of",
]
# A task after "to" (a goal's, a reminder's, a note's, "me"'s) cut off on a verb that must take an object: lose what?
TASK_VERB_WITHOUT_OBJECT = [
    "Set me a goal to reach",
    "Set a target to save",
    "Add a reminder to pay",
    "Make it my goal to earn",
    "Pop a note to buy",
]
# Things named by their kind and by a pointer at something never said: the ingredients for which stew?
KIND_OF_A_POINTED_THING = [
    "Put the ingredients for that stew on my shopping list",
    "Add the dates of that trip to my list",
    "Pop the names for those invites into my list",
    "Stick the items for this project on my to-do list",
]
# "Excuse me" abroad opens a request as "please" does; the request still points at something never said.
EXCUSE_ME_THEN_A_POINTER = [
    "Sumimasen, kindly move that reminder to later.",
    "Perdón, please move that reminder to later.",
    "Disculpa, move that one to later please",
    "Entschuldigung, please cancel that one.",
    "Scusi, please move that reminder to later",
    "Desculpe, move that thing to next week",
]


@pytest.mark.parametrize("text", CREATING_CUT_OFF + TASK_VERB_WITHOUT_OBJECT + KIND_OF_A_POINTED_THING
                         + EXCUSE_ME_THEN_A_POINTER)
def test_an_underspecified_command_asks(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# The same kinds with their content given still act.
WITH_CONTENT = [
    ("Sumimasen, add oat milk to my shopping list.", "list"),
    ("Perdón, remind me to call the vet at 4pm.", "schedule"),
    ("Set a goal to lose 3 kilos by June", "goal"),
    ("Set a target to save 200 pounds a month", "goal"),
    ("Set a goal to run every morning", "goal"),
    ("Start a list for the picnic with crisps, grapes and rolls", "list"),
    ("Add the ingredients for lasagne to my list", "list"),
    ("Remind me to pay the window cleaner on Friday", "schedule"),
]


@pytest.mark.parametrize(("text", "skill"), WITH_CONTENT)
def test_the_same_kinds_with_content_act(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}
