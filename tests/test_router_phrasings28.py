"""Issue 31's thirtieth round: the kinds of message routing_tuning29's looked-at two thirds found, and three left over
from earlier sets' looked-at thirds.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# A fact handed over after "save this:" and cut off on its verb: what is it?
HANDED_OVER_CUT_OFF = [
    "Save this: the code for the side gate is",
    "Remember this for me: my locker number is",
    "Please note this down: the dentist's number is",
]
# A call on the person about a pointer never said, at a time: a nudge about which one?
NUDGE_ABOUT_A_POINTER = [
    "Give me a nudge about that one at 6pm",
    "Give me a shout about it at half 7",
    "Send me a quick buzz about that at noon",
]
# A stretch of time or a holiday to be put in order, with a tag maybe: which part of it?
TIME_TO_ORGANISE = [
    "Get next week organised for me",
    "Get Easter in order for us please",
    "Get the weekend organised for me, would you?",
    "Get the weekend sorted for me, yeah?",
]


# Not kept, nothing handed over: "this" after a deed with no fact to store, "we" with a place of the person's own.
STILL_ASKED = ["Keep this for me.", "Sort this for me, the kitchen is a mess", "Remind me how we get there"]


@pytest.mark.parametrize("text", HANDED_OVER_CUT_OFF + NUDGE_ABOUT_A_POINTER + TIME_TO_ORGANISE + STILL_ASKED)
def test_an_underspecified_command_asks(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# "This" kept with nothing but where and for whom, then a comma and the fact: "this" points forward, as before a colon.
KEPT_THEN_GIVEN = [
    "Keep this safe for me please, the alarm code is 7731.",
    "Save this for me, my National Insurance number is QQ123456C",
    "Store these for me please, the kids' shoe sizes are 11 and 13.",
]


@pytest.mark.parametrize(("text", "expected"), [(text, ("ACT", "memorize")) for text in KEPT_THEN_GIVEN] + [
    ("Save this: the code for the side gate is 4410", ("ACT", "memorize")),
    ("Give me a nudge about the bins at 7pm", ("ACT", "schedule")),
])
def test_a_command_with_its_content_acts(routers, text, expected):  # noqa: F811
    assert routes(routers, text) == {expected}


# "Remind me why/how we ..." with everyone's "we" (a verb in general, no thing in particular after it) asks to explain;
# no point left in anything is a plea; a lead word inside a clause does not make "which was" ask.
ANSWERED = [
    "Remind me how we get rainbows",
    "Remind me why we yawn",
    "Remind me, why do we have time zones?",
    "Lost the flat and my job in the same month, I don't see the point anymore",
    "Nothing I do works, honestly what's the point of trying",
    "Ok, which is better?",
    "I keep crying at night and I can't stop",
]


@pytest.mark.parametrize("text", ANSWERED)
def test_a_question_or_a_plea_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# Told, nothing asked: a relative clause after a lead word used as a word ("to say hello, which ..."), a thing come at
# last named with a verb's word, a mood that comes back on its occasions, "I could cry" at good news, a one-word verdict
# on one's own news.
TOLD = [
    "Twelve lengths today without stopping. Progress?",
    "Ran 5k without walking once. Improvement?",
    "Our old neighbour came by to say hello, which was really sweet.",
    "Popped into the bakery to say thanks, which made their day.",
    "Clean sheets at last, the washing machine is fixed.",
    "Open roads at last, drove to the coast with no traffic.",
    "I've sung in the choir for years and I still get nervous before concerts.",
    "I always get a bit anxious before flights, even after all these years.",
    "Our little one said her first word today, I could cry.",
]


@pytest.mark.parametrize("text", TOLD)
def test_news_or_a_trait_is_told(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}
