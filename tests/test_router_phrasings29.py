"""Issue 31's thirty-first round: the kinds of message routing_tuning30's looked-at two thirds found, put in general
forms (other places content is said to be, other bare answers, other bare commands).

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# A list or reminders made out of a paper, a file or a page the message does not carry: what does it say?
MADE_FROM_UNSEEN = [
    "Make a list from the recipe below please",
    "Make a shopping list from the attached recipe",
    "Make a list from the flyer",
    "Make a list of everything on the label.",
    "Set reminders from the email below.",
    "Make me a to-do list out of the newsletter.",
    "Can you do me a checklist based on the worksheet?",
    "Make a list of the dates on the poster please",
]
# The place in a conversation this one cannot see: where was that?
WHERE_WE_LEFT_OFF = [
    "Just carry on from where we left off",
    "Pick up from where we stopped last time",
    "Keep going from where we were.",
    "Let's continue where we got to yesterday.",
    "Go back to what we were doing.",
]
# A deed on a whole area, with only who or what it is for: which part of it?
FOR_WHAT_ONLY = [
    "Get everything ready for the wedding, would you?",
    "Get it all ready for Monday please",
    "Get the garden stuff sorted for my mum",
    "Deal with the school things for the kids",
    "Handle the car stuff for next week",
]
# An answer to a question never asked: a clock with no hour, none of the options, assent and a pick.
UNASKED_PIECES = [
    "Quarter past, I think.",
    "About half past.",
    "Ten to, I think.",
    "Neither of them, to be honest.",
    "None of them, sorry.",
    "Yes please, the larger one.",
    "Ok, the blue one.",
    "No, the smaller box please",
]
# Reminders asked for with the only times in the message told of what already happened: remind when?
TOLD_TIMES_ONLY = [
    "The plumber called at 9 and the school texted around noon. Remind me about both.",
    "My sister phoned at lunchtime, set a reminder for it",
    "Remind me to ring the vet back, she rang at 3.",
]
# Known to both sides only, or a letter left for an amount or a date: which, how much, by when?
SHARED_OR_LETTERED = ["You know what to do.", "Just do what you usually do.", "Ok, you know the drill.",
                      "Goal: lose X kg by Y.", "Set a goal to read N pages a day.", "New goal: run X km by Y",
                      "Make a to-do list from my notes above.", "Set reminders from the dates above please"]
# A goal asked for, then a "no" that answers, not a thing forbidden: which goal?
NO_THAT_ANSWERS = ["Could you set up a goal for me? No idea what yet though.", "Set up a goal for me. No rush on it."]


@pytest.mark.parametrize("text", MADE_FROM_UNSEEN + WHERE_WE_LEFT_OFF + FOR_WHAT_ONLY + UNASKED_PIECES
                         + TOLD_TIMES_ONLY + NO_THAT_ANSWERS
                         + SHARED_OR_LETTERED)
def test_an_underspecified_message_asks(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Agreeing, "honestly" as a word of one's own, a time of one's own: told, nothing asked.
@pytest.mark.parametrize("text", ["Me neither.", "Neither do I.", "Me neither, to be honest.", "Yes please.",
                                  "To be honest, I'm tired.", "It's quarter past."])
def test_a_remark_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Writing asked for, a list whose items are given, things named: not underspecified.
@pytest.mark.parametrize(("text", "expected"), [
    ("Make a list of films to watch.", ("RESPOND", None)),
    ("Set a goal to lose 5 kg by June.", ("ACT", "goal")),
    ("Make a shopping list for a roast dinner.", ("RESPOND", None)),
    ("Make a list from this: eggs, milk, bread.", ("ACT", "list")),
    ("Mum rang at 6. Remind me to call her back at 8.", ("ACT", "schedule")),
    # A goal said after the ask as a thing forbidden: "no" that forbids, not "no" that answers.
    ("Set up a goal for me. No sugar until March.", ("ACT", "goal")),
    ("Can you set a goal for me? No phone after 10pm on school nights.", ("ACT", "goal")),
    ("Could you make me a goal please? No takeaways for the whole of Lent.", ("ACT", "goal")),
    # Stored goals brought up, where they are shown before what goes with them: recall, not a new goal.
    ("Pull my goals up on the screen with the progress for each one, please.", ("ACT", "recall")),
    ("Bring my goals up with the progress on each", ("ACT", "recall")),
    ("The parcel arrived at 10am. Set a reminder to return it tomorrow.", ("ACT", "schedule")),
])
def test_a_message_that_says_enough_is_not_asked_about(routers, text, expected):  # noqa: F811
    assert routes(routers, text) == {expected}
