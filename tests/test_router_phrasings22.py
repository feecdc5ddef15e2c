"""Issue 31's twenty-second round: the kinds of message routing_tuning23's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands with nothing to act on, which must ask: filler in place of the content ("note down that blah blah"), a
# program's interpolation slot left in ("\(item)", "#{note}"), a reference to something never said made vague by a
# clause of when ("remind me about that ... when I'm home") or by a clock time before it ("I missed the 7:40, ... those
# reminders we talked about"), "those <things> we discussed", the contents of a container the assistant cannot see
# ("whatever's in my basket"), data named by its day and put against a goal ("today's numbers"), a deed done again with
# an adverb ("do exactly the same for ..."), a number guessed at with a hedge of several words, lettered entries left
# empty.
NEEDS_ASKING = [
    "Save a note for me that yada yada yada.",
    "Please remember that blah blah, thanks.",
    "Put \\(thing1) and \\(thing2) on the camping list.",
    "Add #{item} to my groceries.",
    "Remind me about it on Saturday morning once I'm up.",
    "Set a reminder for that at 4pm while I'm at the gym.",
    "Ugh, the 7:40 was cancelled again. Anyway, can you set up those reminders we discussed?",
    "Could you add those bits we talked about to my DIY list?",
    "Could you put everything in my trolley on the shopping list?",
    "Save whatever is in the top drawer to my notes.",
    "Log this week's figures towards my savings goal.",
    "Put yesterday's readings against the blood pressure goal.",
    "Do exactly the same for the Friday rota too.",
    "Now do just the same for the kids' rota.",
    "Maybe 25, give or take.",
    "Around 12 more or less.",
    "Things for the picnic:\na.\nb.\nc.",
]


@pytest.mark.parametrize("text", NEEDS_ASKING)
def test_a_command_with_nothing_to_act_on_asks(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the same forms with their content, and the same words as talk.
@pytest.mark.parametrize(("text", "mode"), [
    ("Remind me to water the tomatoes tomorrow when I'm back from work.", ("ACT", "schedule")),
    ("Remind me at 7:30 to put the bins out.", ("ACT", "schedule")),
    ("Store this: 5521 is the bike lock code.", ("ACT", "memorize")),
    ("Add the milk in the fridge door to my list.", ("ACT", "list")),
    ("Log 9000 steps against my walking goal.", ("ACT", "goal")),
    ("Add oat milk, bin bags and a bag of rice to my list.", ("ACT", "list")),
    ("Work was just blah blah blah today.", ("ACKNOWLEDGE", None)),
    ("I keep whatever's in the basket for the kids.", ("ACKNOWLEDGE", None)),
    ("Those trainers I bought yesterday are lovely.", ("ACKNOWLEDGE", None)),
])
def test_the_same_forms_with_their_content_or_as_talk_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Goals put in with their content: a goal of a kind put in ("a fitness goal in for me: ..."), "this goal on for me,
# <what>", a deed turned into a goal of a rhythm ("into a daily goal").
GOALS_PUT_IN = [
    "Put a fitness goal in for me: swim 40 lengths every Saturday.",
    "Pop this goal on for me, no takeaways until Easter.",
    "please turn reading ten pages a night into a daily goal for me",
    "Make cycling to work into a weekly goal.",
]


@pytest.mark.parametrize("text", GOALS_PUT_IN)
def test_a_goal_put_in_with_its_content_is_set(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "goal")}


@pytest.mark.parametrize(("text", "mode"), [
    ("I put a savings goal in my banking app last year.", ("ACKNOWLEDGE", None)),
    ("How do I turn a hobby into a daily habit?", ("RESPOND", None)),
])
def test_a_goal_told_or_asked_about_is_not_set(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# A question about what was kept, then a command to show it in a sentence of its own: the command after the question
# mark opens a clause like one after a full stop.
@pytest.mark.parametrize("text", [
    "What did I store about the dentist? Pull up my notes.",
    "Did I save anything on the car insurance? Show me the notes please.",
])
def test_a_question_then_a_command_to_show_what_was_kept_recalls(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "recall")}


# Two symbol keys held down in turn and a key or three struck at one end: mashing, not a message.
@pytest.mark.parametrize("text", ["......,,,,,qjx", "}}}}{{{{{wvz", "::::::''''m"])
def test_symbol_keys_held_in_turn_with_a_key_struck_are_ignored(routers, text):  # noqa: F811
    assert {mode for mode, _ in routes(routers, text)} == {"IGNORE"}


# Guards (they passed before too): a short word said with held marks is a message.
@pytest.mark.parametrize("text", ["ok....!!!!", "hmm???...", "lol!!!!....", "wow!!!...."])
def test_a_word_said_with_held_marks_is_not_ignored(routers, text):  # noqa: F811
    assert "IGNORE" not in {mode for mode, _ in routes(routers, text)}
