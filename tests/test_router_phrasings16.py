"""Issue 31's sixteenth round: the kinds of message routing_tuning17's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands that name nothing the assistant can act on: a fact cut off on its verb, content held in something attached
# or scanned, filler text where the content goes, "the thing about X" or "the alarm" with nothing saying which one, an
# edit asked for as a thing made with nothing to change to, what was sent "before" in a learner's present.
NOTHING_TO_ACT_ON = [
    "Note that the code for the side gate is",
    "save that Jo's new mobile number is",
    "Put everything in the attached spreadsheet on my to-do list",
    "Save this note: lorem ipsum dolor",
    "remember this: blah blah blah",
    "Save the thing about the boiler",
    "Note down the stuff about Grandma's pension",
    "remember the bit about the car insurance",
    "Push the alarm back ten minutes",
    "Shift the appointment to Thursday afternoon",
    "Can you make a quick tweak to my reading goal?",
    "I'd like to make some changes to my shopping list",
    "Please save the number I give you yesterday",
    "put in my notes the address I send you before",
    "please make goal for me",
]


@pytest.mark.parametrize("text", NOTHING_TO_ACT_ON)
def test_a_command_that_names_nothing_to_act_on_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the same commands carrying their content, or saying which one.
@pytest.mark.parametrize(("text", "mode"), [
    ("Remember that the wifi password is ham42", ("ACT", "memorize")),
    ("remember where the spare key is", ("ACT", "memorize")),
    ("Remind me how old Sam is", ("RESPOND", None)),
    ("Add printer paper and envelopes to my to-do list", ("ACT", "list")),
    ("Remember this: the recycling lorry comes on Tuesdays", ("ACT", "memorize")),
    ("Remember the thing about the boiler: the pilot light goes out if the door is left open", ("ACT", "memorize")),
    ("Move my optician reminder to Saturday", ("ACT", "schedule")),
    ("Move the reminder about the bins to Friday", ("ACT", "schedule")),
    ("Make a change to my step goal: 12,000 a day", ("ACT", "goal")),
    ("Please save the number I give you: 0161 496 0000", ("ACT", "memorize")),
    ("please create new goal: read 20 books this year", ("ACT", "goal")),
    ("Can you make notes?", ("RESPOND", None)),
])
def test_the_same_commands_with_their_content_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Commands that carry their content in shapes read wrongly before: a mental note made of a fact, a learner's "set goal
# for me, I want ...", items whacked or shoved onto a list, a fact put "in your memory" as "it ... that ...".
CARRYING_CONTENT = [
    ("make a mental note for me of Lena's shoe size, it's a 38", "memorize"),
    ("Can you set goal for me, I want run half marathon in October", "goal"),
    ("Shove sun cream and flip-flops on the holiday list", "list"),
    ("Put it in your memory that Jo's flat is number 14", "memorize"),
]


@pytest.mark.parametrize(("text", "skill"), CARRYING_CONTENT)
def test_a_command_carrying_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Guards (they passed before too): a habit told, a knock told, a pointer put away with nothing said, the remaining
# ones (of what?) and the remaining things named.
@pytest.mark.parametrize(("text", "mode"), [
    ("I always make a mental note of where I park.", ("ACKNOWLEDGE", None)),
    ("I whacked my knee on the shopping trolley", ("ACKNOWLEDGE", None)),
    ("Put it in my notes", ("CLARIFY", None)),
    ("Add the remaining ones too", ("CLARIFY", None)),
    ("Add the remaining birthday cards and wrapping paper to my list", ("ACT", "list")),
])
def test_habits_knocks_and_pointers_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Stored things asked for with "show" mistyped: read back.
@pytest.mark.parametrize("text", ["shw me my reminders", "shwo my goals please"])
def test_stored_things_shown_with_show_mistyped_act(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "recall")}


# "Remind me (again)" before a dash or colon and a question: the question is asked, no reminder set.
@pytest.mark.parametrize(("text", "mode"), [
    ("Remind me again – who painted the Sistine Chapel?", ("RESPOND", None)),
    ("remind me: what's the capital of Australia?", ("RESPOND", None)),
    ("Remind me again — what's my locker number?", ("ACT", "recall")),
])
def test_remind_me_before_a_dash_and_a_question_asks_it(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Guard (it passed before too): a reminder's time after a dash.
def test_remind_me_before_a_dash_and_a_time_still_reminds(routers):  # noqa: F811
    assert routes(routers, "remind me - at 7 to ring the vet") == {("ACT", "schedule")}


# News under a label naming where it is from, or announced ("Get this - ..."): told, nothing asked.
@pytest.mark.parametrize("text", ["Update from the allotment: the leeks are up and the shed roof is fixed",
                                  "Get this - the council finally fixed the pothole"])
def test_news_under_a_label_or_announced_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards (they passed before too): an update asked for, a request under a news label.
@pytest.mark.parametrize(("text", "mode"), [
    ("Update my reading goal to 30 books", ("ACT", "goal")),
    ("Update from the dentist: can you move my check-up reminder to Friday?", ("ACT", "schedule")),
])
def test_an_update_asked_for_or_under_a_label_acts(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Keys walked between the digit row and the row under it, and accented letters alone struck in turn: no message.
@pytest.mark.parametrize("text", ["2w3e4r5t6y", "9o8i7u6y5t", "øæåøæå", "äöüäöü"])
def test_digit_row_walks_and_accented_letters_alone_are_ignored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# Guards (they passed before too): letters and digits in turn off the walk, a word with an accented letter.
@pytest.mark.parametrize("text", ["a1b2c3", "Øre", "4x4 for sale"])
def test_codes_and_accented_words_are_no_mash(routers, text):  # noqa: F811
    assert routes(routers, text) != {("IGNORE", None)}
