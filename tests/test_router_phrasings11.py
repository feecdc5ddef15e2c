"""Issue 31's eleventh round: the kinds of message routing_tuning12's looked-at two thirds found, and a known miss.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes, signals_of  # noqa: F401 (a fixture)

# What someone else put forward (quoted, raised, proposed, made), or gave in a learner's present tense ("he give me"),
# maybe after where it goes ("put in my notes ..."): never said here, so it needs asking.
PUT_FORWARD_BY_OTHERS = [
    "Could you put the figures the accountant quoted into my notes?",
    "add the points she raised to my to-do list please",
    "pls save in my notes the address that she give me",
    "Long shift on the ward, two admissions and a fire alarm at lunch. Can you set up the checks the consultant "
    "proposed for every Friday?",
]


@pytest.mark.parametrize("text", PUT_FORWARD_BY_OTHERS)
def test_what_someone_else_put_forward_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards, not fixes (they passed before): the same commands with what they store given stay ACT.
STORED_WITH_CONTENT = [
    ("Could you put the figures into my notes: rent 900, bills 140", "memorize"),
    ("add the points to my to-do list: gutters, shed roof, fence panel", "list"),
]


@pytest.mark.parametrize(("text", "skill"), STORED_WITH_CONTENT)
def test_the_same_command_with_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# A command to show stored things: "open up", what was kept named with the kind between ("what notes I've saved"), and
# a question naming them followed by a pointer that shows them ("What reminders do I have set? List them").
SHOW_STORED = [
    "Open up my reminders please",
    "Show me which notes I've saved about the boiler.",
    "Which goals have I got? Read them out",
    "What reminders do I have set at the moment? List them",
]


@pytest.mark.parametrize("text", SHOW_STORED)
def test_a_command_to_show_stored_things_recalls(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "recall")}


# A clock time as said, alone ("half six" is half past six), answers a question never asked.
SPOKEN_CLOCK_ALONE = ["Half seven.", "half six", "half 9"]


@pytest.mark.parametrize("text", SPOKEN_CLOCK_ALONE)
def test_a_spoken_clock_time_alone_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): the fix above must not take it.
def test_a_spoken_clock_time_in_a_reminder_still_schedules(routers):  # noqa: F811
    assert routes(routers, "remind me at half six to ring the garage") == {("ACT", "schedule")}


# Putting things in order with nothing named: which things?
ORDER_WITH_NOTHING_NAMED = ["get the lot sorted for me", "just get all my things sorted please"]


@pytest.mark.parametrize("text", ORDER_WITH_NOTHING_NAMED)
def test_putting_unnamed_things_in_order_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Thanks in Cyrillic, maybe with "you", are thanks.
THANKS_IN_CYRILLIC = ["Дякую вам!", "Спасибо!"]


@pytest.mark.parametrize("text", THANKS_IN_CYRILLIC)
def test_thanks_in_cyrillic_are_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Keys held down among more brackets than letters are no message.
HELD_KEYS_IN_BRACKETS = ["<<<<<>>>>>iii1i", ")))))(((((eee3e"]


@pytest.mark.parametrize("text", HELD_KEYS_IN_BRACKETS)
def test_held_keys_among_brackets_are_ignored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# A guard (it passed before too): the fix above must not take it.
def test_a_laugh_with_exclamation_marks_is_not_mashing(routers):  # noqa: F811
    assert routes(routers, "haha!!!!!!") == {("ACKNOWLEDGE", None)}


# "What a ..." exclaims, it asks nothing: a day told after it is acknowledged.
EXCLAIMED = [
    "What a week.",
    "what a day, honestly",
    "What a Tuesday. The van wouldn't start at six and the first job was cancelled.",
]


@pytest.mark.parametrize("text", EXCLAIMED)
def test_an_exclamation_is_no_question(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# A guard (it passed before too): the fix above must not take it.
def test_an_exclamation_then_a_question_is_answered(routers):  # noqa: F811
    assert routes(routers, "What a mess, how do I get red wine out of a carpet?") == {("RESPOND", None)}


# Nobody to turn to, and a death that keeps coming back, are distress: they want a real answer.
NOBODY_TO_TURN_TO = [
    "Lost a patient on the table this morning. I keep seeing her face when I shut my eyes. I don't know who else to "
    "tell.",
    "my best mate crashed his bike on saturday and he didn't make it",
]


@pytest.mark.parametrize("text", NOBODY_TO_TURN_TO)
def test_nobody_to_turn_to_is_distress(routers, text):  # noqa: F811
    assert signals_of(text)["distress"] == 1.0
    assert routes(routers, text) == {("RESPOND", None)}


# A guard (it passed before too): the fix above must not take it.
def test_a_long_day_with_a_plea_still_gets_an_answer(routers):  # noqa: F811
    text = ("The van wouldn't start at six, the first job was cancelled at nine and the insurers kept me on hold all "
            "afternoon. I can't cope with this any more, what do I do?")
    assert routes(routers, text) == {("RESPOND", None)}
