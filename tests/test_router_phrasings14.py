"""Issue 31's fourteenth round: the kinds of message routing_tuning15's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# A reminder asked for with a day and its part of the day, and nothing to be reminded of: "morning" is when, not what.
DAY_PART_ONLY = [
    "Reminder for Thursday afternoon please",
    "Can I have a reminder tomorrow evening?",
    "reminder thurs morning pls",
]


@pytest.mark.parametrize("text", DAY_PART_ONLY)
def test_a_reminder_with_only_a_day_and_its_part_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the same time with a text is a reminder; "sat" before a part of the day is a verb.
def test_a_reminder_with_a_day_part_and_a_text_acts(routers):  # noqa: F811
    assert routes(routers, "Reminder for Thursday afternoon to ring the plumber") == {("ACT", "schedule")}


def test_sat_before_a_part_of_the_day_tells(routers):  # noqa: F811
    assert routes(routers, "I sat morning and night by her bed") == {("ACKNOWLEDGE", None)}


# An entry filled only by a pointer ("a note of those dates"), with nothing here saying what they are.
def test_a_note_of_a_pointer_never_said_needs_asking(routers):  # noqa: F811
    assert routes(routers, "Make a note of those dates for me") == {("CLARIFY", None)}


# Guards (they passed before too): the pointer's content said in a clause after it, or an entry filled by words.
@pytest.mark.parametrize(("text", "skill"), [
    ("Make a note of that number, it's 0161 496 0000", "memorize"),
    ("make it a goal to swim twice a week", "goal"),
])
def test_a_note_or_goal_whose_content_is_said_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# A thing named by where it sits in something handed over where this conversation cannot see (a photo, a scan, an
# email): which number, which time?
HELD_UNSEEN = [
    "Save the phone number on the flyer I photographed",
    "Remember the pickup time in the email I forwarded",
]


@pytest.mark.parametrize("text", HELD_UNSEEN)
def test_a_thing_in_something_handed_over_unseen_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the content given after a colon, or a fact said in a that-clause.
@pytest.mark.parametrize("text", [
    "Remember the postcode from the form I emailed you: SW1A 1AA",
    "Remember that the letter I scanned says the rent goes up in May",
])
def test_a_thing_from_something_unseen_whose_content_is_given_acts(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "memorize")}


# Content handed over after a colon as a word standing for content to come.
PLACEHOLDER_HANDED = [
    "Add a goal: TBC",
    "Put this on the shopping list: TBD",
]


@pytest.mark.parametrize("text", PLACEHOLDER_HANDED)
def test_a_placeholder_word_after_a_colon_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): real content after the colon.
def test_real_content_after_a_colon_acts(routers):  # noqa: F811
    assert routes(routers, "Set a goal: run 5k by June") == {("ACT", "goal")}


# Made like something the assistant did before, which this conversation never shows.
def test_made_like_the_one_done_before_needs_asking(routers):  # noqa: F811
    assert routes(routers, "Make the shopping list like the one you did for Mum") == {("CLARIFY", None)}


# A guard (it passed before too): "like" as a verb tells a liking.
def test_liking_the_ones_set_before_is_acknowledged(routers):  # noqa: F811
    assert routes(routers, "I like the ones you set for Dad, thanks") == {("ACKNOWLEDGE", None)}


# A list named by a purpose of several words, then its items after a colon.
LONG_PURPOSE_LISTS = [
    "Packing list for the long weekend in the Lake District with the kids: wellies, torches, snacks",
    "Checklist for moving Mum into the care home next week: glasses, slippers, photos",
]


@pytest.mark.parametrize("text", LONG_PURPOSE_LISTS)
def test_a_list_with_a_long_purpose_and_its_items_acts(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


# A guard (it passed before too): asked for ideas after the colon, it wants an answer.
def test_a_list_with_a_long_purpose_asking_for_ideas_is_answered(routers):  # noqa: F811
    text = "A reading list for someone getting into Russian novels for the first time: any ideas?"
    assert routes(routers, text) == {("RESPOND", None)}


# Stored things shown: "whatever you've got stored", "walk/take me through my ...".
SHOWN_STORED = [
    "Pull up whatever you've got stored on the boiler",
    "Walk me through my reminders for tomorrow",
    "take me through my goals for this year",
]


@pytest.mark.parametrize("text", SHOWN_STORED)
def test_going_through_what_is_stored_recalls(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "recall")}


# A guard (it passed before too): walked through something not stored, an answer.
def test_walked_through_options_is_answered(routers):  # noqa: F811
    assert routes(routers, "Walk me through my options for a pension") == {("RESPOND", None)}


# Called on at a time ("give us a bell in 20 minutes to ..."): a reminder; with no text, asked of what.
@pytest.mark.parametrize("text", [
    "Give us a bell in 20 minutes to take the bread out",
    "give me a heads-up tomorrow at 8 to bring the permits",
])
def test_a_call_on_at_a_time_with_a_text_reminds(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "schedule")}


def test_a_call_on_at_a_time_with_no_text_needs_asking(routers):  # noqa: F811
    assert routes(routers, "Give me a shout at 6") == {("CLARIFY", None)}


# Guards (they passed before too): a heads-up on a topic, a shout when needed.
@pytest.mark.parametrize("text", ["give me a heads up on the best budget laptops",
                                  "Give me a shout if you need anything"])
def test_a_call_on_with_no_time_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# A question about the world with "remind me" as its tag, or after "remind me again,".
REMIND_TAGGED = [
    "How many ounces in a pound, remind me?",
    "Remind me again, is a tomato a fruit?",
    "Remind me again, what year did the Berlin Wall fall?",
]


@pytest.mark.parametrize("text", REMIND_TAGGED)
def test_a_question_tagged_remind_me_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# Guards (they passed before too): a question about one's own stored things, a statement tagged "remind me".
@pytest.mark.parametrize(("text", "skill"), [
    ("What's my locker code, remind me?", "recall"),
    ("The bins go out tonight, remind me", "schedule"),
])
def test_own_things_or_a_statement_tagged_remind_me_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# "Is there a way to ...?" asks how, even about the person's own list or goals.
WAY_TO = [
    "any way to sync my shopping list with my wife's phone?",
    "Is there a better way to keep track of my goals?",
]


@pytest.mark.parametrize("text", WAY_TO)
def test_asking_if_there_is_a_way_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# A guard (it passed before too): a way for the assistant to remind the person is asked of it.
def test_a_way_to_remind_me_with_a_time_and_text_acts(routers):  # noqa: F811
    assert routes(routers, "Is there a way to remind me at 6 to call mum?") == {("ACT", "schedule")}


# A relative clause after a noun ("..., which is great timing", "..., who was a nurse") tells, it asks nothing.
RELATIVE_CLAUSES = [
    "My sister, who was a nurse for 30 years, just retired.",
    "The van failed its MOT, which is great timing",
]


@pytest.mark.parametrize("text", RELATIVE_CLAUSES)
def test_news_with_a_relative_clause_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards (they passed before too): after choices or a lead-in, or before a comparison, "which is" asks.
@pytest.mark.parametrize("text", ["Aldi or Lidl, which is cheaper", "ok, which is better for a beginner"])
def test_which_after_choices_or_a_lead_in_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# News announced with "would you believe it" / "can you believe it": no question.
BELIEVE_IT = [
    "Would you believe it, my tomatoes finally ripened",
    "Can you believe it - the council fixed the pothole",
]


@pytest.mark.parametrize("text", BELIEVE_IT)
def test_news_opened_with_would_you_believe_it_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards (they passed before too): the same words asking.
@pytest.mark.parametrize("text", ["would you believe it if I told you I ran 10k?",
                                  "Can you believe how expensive butter is now?"])
def test_would_you_believe_asking_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# A whole undertaking to sort, named by one word: which part of it?
SORT_UNDERTAKING = [
    "help us sort the christening",
    "can you sort the move for me",
]


@pytest.mark.parametrize("text", SORT_UNDERTAKING)
def test_sorting_a_whole_undertaking_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): what to sort said, or a stored list sorted.
@pytest.mark.parametrize(("text", "mode"), [
    ("Help me sort out a seating plan for 80 guests", ("RESPOND", None)),
    ("help me sort the laundry by colour", ("RESPOND", None)),
    ("sort out my shopping list", ("ACT", "list")),
])
def test_sorting_a_named_part_or_a_list_is_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Keys walked in a zigzag between two rows, or a key struck inside a run of symbols: no message.
MASHED = ["qawsedrftg", "drftgyhujikolp", "?!?!?!x?!?!", "(((m)))"]


@pytest.mark.parametrize("text", MASHED)
def test_zigzag_keys_and_a_key_among_symbols_are_ignored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# Guards (they passed before too): "ok" trailed or led by dots is a reply.
@pytest.mark.parametrize("text", ["k......", "...ok"])
def test_ok_with_dots_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}
