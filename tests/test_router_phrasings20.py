"""Issue 31's twentieth round: the kinds of message routing_tuning21's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from services.router.textview import text_features, text_view
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands that carry their content in shapes read wrongly before: an aim stated then its progress handed over after
# a dash, stored things thrown up on the screen, a rundown of them asked for by a label with no verb.
CARRYING_CONTENT = [
    ("I want to swim a mile without stopping by May \u2014 please keep an eye on that for me.", "goal"),
    ("I'd like to save 3,000 for a new van \u2014 follow my progress on that, please.", "goal"),
    ("Throw my reminders up on the screen, would you.", "recall"),
    ("Flash my notes up on the screen please, I need the gate code.", "recall"),
    ("Brief rundown of next week's reminders pls", "recall"),
    ("Can you give me a quick rundown of this month's goals?", "recall"),
]


@pytest.mark.parametrize(("text", "skill"), CARRYING_CONTENT)
def test_a_command_carrying_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Commands that name nothing the assistant can act on: template slots in doubled parentheses, printf names, angle
# quotes and HTML comments; what is on a note the conversation cannot see; a person's detail never given; a whole run
# of chores to be done.
NOTHING_TO_ACT_ON = [
    "Add ((thing one)) and ((thing two)) to the camping list.",
    "remind me on Friday at %(hour)s to %(chore)s",
    "Put «first item» on the shopping list",
    "Please remember this: <!-- the fact goes here -->",
    "Save the numbers on the sticky note by the kettle.",
    "Remember her phone number.",
    "Just get all my paperwork dealt with, please.",
]


@pytest.mark.parametrize("text", NOTHING_TO_ACT_ON)
def test_a_command_that_names_nothing_to_act_on_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Keys struck with a digit or two among them, or digits and letters walking the keyboard together, are no message.
@pytest.mark.parametrize("text", ["zmxqpwoe4ncbv", "0i9u8y7t"])
def test_keys_struck_with_digits_among_them_are_mashing(routers, text):  # noqa: F811
    assert text_features(text_view(text))["keyboard_mash"] == 1.0
    assert routes(routers, text) == {("IGNORE", None)}


# Guards (they passed before too): an aim told with no hand-over, a link to follow, a what-to-watch, parentheses
# inside an item, a fact with its value, a person's thing with its value, texting with digits, an errand named.
@pytest.mark.parametrize(("text", "mode"), [
    ("I want to swim a mile without stopping by May.", ("ACKNOWLEDGE", None)),
    ("I want to fix my bike's gears - follow this guide?", ("RESPOND", None)),
    ("Add eggs (free range (not caged)) to the shopping list", ("ACT", "list")),
    ("Remember that the wifi code is on a sticky note by the router.", ("ACT", "memorize")),
    ("Save his email address: tomas.k@example.com", ("ACT", "memorize")),
    ("Add her birthday cake to the party list", ("ACT", "list")),
    ("gr8 c u l8r", ("ACKNOWLEDGE", None)),
    ("Quick rundown of the Wars of the Roses please.", ("RESPOND", None)),
])
def test_the_same_forms_with_their_content_or_without_a_command_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
