"""Issue 31's thirteenth round: the kinds of message routing_tuning14's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes, signals_of  # noqa: F401 (a fixture)


def routes_after(routers, earlier: str, reply: str, text: str) -> set[tuple[str, str | None]]:  # noqa: F811
    """The (mode, skill) each router gives ``text`` after one turn (``earlier``, answered with ``reply``) of ACT."""
    return routes(routers, text, {"working_memory": [[earlier, reply]], "previous_mode": "ACT"})


# A list's entries numbered or bulleted and left empty: a form to fill in, no item to add.
EMPTY_ENTRIES = [
    "Bits for the camping list:\n1.\n2.\n3.\n4.",
    "Christmas list for the twins:\n-\n-\n-",
    "Jobs for the weekend list: 1) 2) 3)",
]


@pytest.mark.parametrize("text", EMPTY_ENTRIES)
def test_a_list_with_its_entries_left_empty_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): the same entries filled are items.
def test_a_list_with_its_entries_filled_acts(routers):  # noqa: F811
    assert routes(routers, "Bits for the camping list:\n1. tent pegs\n2. head torch\n3. matches") == {("ACT", "list")}


# Told in a skill's words, then asked why the person does as they do: an answer, not a reminder.
WHY_OWN_DEEDS = [
    "I keep snoozing my reminders until they're useless. Why do I do that?",
    "My shopping list stays on the fridge every week while I'm at the till. Why does my memory do this to me?",
    "I always leave my to-do list at home. Why am I like this?",
]


@pytest.mark.parametrize("text", WHY_OWN_DEEDS)
def test_told_then_asked_why_one_does_it_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# "Do the same" for a skill's store, with nothing before it: the same as what?
DEEDS_AGAIN = [
    "Could you do the same for my sister's packing list?",
    "pls do the same for our holiday packing list",
]


@pytest.mark.parametrize("text", DEEDS_AGAIN)
def test_doing_the_same_for_a_list_never_shown_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): after a list was written to, the same deed is done again.
def test_doing_the_same_for_a_list_after_one_was_added_to_acts(routers):  # noqa: F811
    got = routes_after(routers, "add rope and a compass to my hiking list", "Added rope and a compass to your hiking "
                       "list.", "Could you do the same for my sister's packing list?")
    assert got == {("ACT", "list")}


# A deed done before, asked for after a first sentence: what was done is not in this conversation.
DEEDS_AS_BEFORE = [
    "The quiz night went fine but the raffle was a shambles. Do what you did for the summer fete, could you?",
    "Orders are piling up again at the bakery. Please do exactly what you did last month, would you mind?",
]


@pytest.mark.parametrize("text", DEEDS_AS_BEFORE)
def test_a_deed_as_before_after_a_first_sentence_needs_asking(routers, text):  # noqa: F811
    assert signals_of(text)["deed_unnamed"] == 1.0
    assert routes(routers, text) == {("CLARIFY", None)}


# Which time suits, said with no question before it: an answer to what?
SUITS_UNASKED = [
    "Thursday works for me.",
    "11:30 suits me",
    "Saturday's better than Sunday",
    "Friday works best for me",
]


@pytest.mark.parametrize("text", SUITS_UNASKED)
def test_saying_which_time_suits_with_nothing_asked_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): a day told in the past ("was fine") is no answer.
def test_a_day_that_was_fine_is_told(routers):  # noqa: F811
    assert signals_of("Saturday was fine")["context_dependent"] == 0.0


# Thanks in Uzbek, Malay or Tagalog, then how it helped: acknowledged.
THANKS_ABROAD = [
    "Raxmat, that sorted it.",
    "Terima kasih! That fixed it.",
    "Salamat po, that made it clear.",
]


@pytest.mark.parametrize("text", THANKS_ABROAD)
def test_thanks_in_other_languages_is_acknowledged(routers, text):  # noqa: F811
    assert signals_of(text)["thanks"] == 1.0
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# "Remind me where ..." a place is asks for an explanation, like "remind me which ...".
REMIND_WHERE = [
    "remind me where Lesotho is, somewhere inside South Africa?",
    "Could you remind me where the Great Barrier Reef is exactly",
]


@pytest.mark.parametrize("text", REMIND_WHERE)
def test_remind_me_where_a_place_is_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# A question announced as odd, weird or strange needs no question mark.
ODD_QUESTIONS = [
    "ok odd question but do fish ever sleep",
    "strange question, can dogs see the colour red",
    "weird question lol do penguins have knees",
]


@pytest.mark.parametrize("text", ODD_QUESTIONS)
def test_a_question_announced_as_odd_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# A learner's "this thing what we discuss": a pointer at a talk never had here.
LEARNER_POINTERS = [
    "Please you save the thing what we discuss in my notes.",
    "Put this plan what we talk about on my list please.",
]


@pytest.mark.parametrize("text", LEARNER_POINTERS)
def test_a_learners_pointer_at_what_we_discuss_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}
