"""Issue 31's nineteenth round: the kinds of message routing_tuning20's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from services.router.objects import request_object
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands that name nothing the assistant can act on: a template's slot in other languages' brackets and sigils, a
# pointer at such a slot, a form's fields left empty one a line, something held in a message the conversation cannot
# see, an entry made out of something unseen, a whole undertaking named by one word.
NOTHING_TO_ACT_ON = [
    "New goal: {% target %}, keep track of it for me",
    "Put ‹first item› and ‹second item› on the camping list",
    "remember that the bins go out on %%WEEKDAY%%",
    "Goal:\nBy when:\nHow I'll know:\nTrack this please.",
    "Save the phone number from the message my brother sent you.",
    "Make a goal out of the ideas in the PDF I attached.",
    "Take care of the garden, please.",
]


@pytest.mark.parametrize("text", NOTHING_TO_ACT_ON)
def test_a_command_that_names_nothing_to_act_on_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


def test_engram_route_says_why_a_pointer_at_a_slot_names_nothing():
    found = request_object("new goal: {% target %} by friday, please track it")
    assert (found.kind, found.missing, found.why) == ("generic", "what", "points at an unfilled template")


# Answers to a question never asked, said with a hedge or an assurance: a letter, a day that suits, a number guessed
# at, a date.
@pytest.mark.parametrize("text", [
    "D, definitely.",
    "A, please.",
    "Wednesday suits better, I reckon.",
    "About 25, I think.",
    "The 14th, probably.",
])
def test_a_bare_answer_with_a_hedge_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the hedge alone, slots and media that a reminder's own text names, the same command
# with its content, a template's brackets around a reminder's text.
@pytest.mark.parametrize(("text", "mode"), [
    ("Definitely.", ("ACKNOWLEDGE", None)),
    ("I think so.", ("ACKNOWLEDGE", None)),
    ("Remind me at {{.Hour}} to {{.Chore}}", ("CLARIFY", None)),
    ("Remind me at 6 to reply to the text from my brother", ("ACT", "schedule")),
    ("Make a goal out of running 5k by June.", ("ACT", "goal")),
    ("Add oat milk and eggs to the camping list", ("ACT", "list")),
    ("Can you set up a goal for me? Not sure what yet.", ("CLARIFY", None)),
    ("Can you set a reminder for me? Tomorrow at 9.", ("CLARIFY", None)),
    ("Give me a quick look at the history of the Eiffel Tower", ("RESPOND", None)),
])
def test_the_same_forms_with_their_content_or_without_a_slot_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Commands that carry their content in shapes read wrongly before: a goal asked for with what it is in the next
# sentence, a fact kept on record, stored things given a look at or pulled up on screen.
CARRYING_CONTENT = [
    ("Can you set up a goal for me? Swim 2 km without stopping by August.", "goal"),
    ("Could you make me a goal? Read twelve novels before the end of the year.", "goal"),
    ("Keep on record that my landlord agreed to replace the fridge.", "memorize"),
    ("Give me a quick look at everything you've saved for me.", "recall"),
    ("Pull my reminders up on screen please", "recall"),
]


@pytest.mark.parametrize(("text", "skill"), CARRYING_CONTENT)
def test_a_command_carrying_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# News opened by a cry shaped as a command or a dare: nothing is to be stopped or guessed.
@pytest.mark.parametrize("text", [
    "Stop the press: the hens are laying again.",
    "Well, blow me down, my brother actually paid me back.",
    "You'll never guess who rang me today: my old PE teacher.",
])
def test_news_opened_by_a_cry_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# A last sentence in a question's word order, typed with no question mark, asks.
def test_a_question_without_its_mark_wants_an_answer(routers):  # noqa: F811
    assert routes(routers, "my flatmate never washes up and i do all of it. am i being a pushover") == {
        ("RESPOND", None)}


# Guards (they passed before too): a question after a cry, an order told, a tired day, a plan.
@pytest.mark.parametrize(("text", "mode"), [
    ("Hold the front page — I passed my driving test!", ("ACKNOWLEDGE", None)),
    ("Guess what, how do I get wax out of a carpet?", ("RESPOND", None)),
    ("Long day at the shop. Am so tired", ("ACKNOWLEDGE", None)),
    ("Got the keys today. Should be moving in next week", ("ACKNOWLEDGE", None)),
])
def test_news_and_questions_near_them_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
