"""Issue 31's seventeenth round: the kinds of message routing_tuning18's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands that name nothing the assistant can act on: a slot left as its format or its name, a fact cut off on a
# relative clause or on "it's", a thing held in a photo, a flyer or an email never seen, a pointer turned into an
# entry, a deed on "the X thing" or on a whole stretch of time, a reminder about what someone said (after its time), a
# heading over empty entries, a new entry asked for by its kind.
NOTHING_TO_ACT_ON = [
    "remind me at hh.mm tomorrow to water the plants",
    "set a reminder for DD/MM at 10am",
    "Add ITEM_NAME to my shopping list pls",
    "new goal: GOAL_NAME by end of year",
    "add insert_item to the camping list",
    "Could you remind me on the dd.mm at 9 to ring the dentist?",
    "remember my sister's address which is",
    "Note down the door code for the gym, which is",
    "pls save the wifi password that is",
    "store my new PIN, it's",
    "Please remember the tracking number in the screenshot",
    "save the address on the flyer",
    "add whatever's on the attached pic to the groceries",
    "turn that into my new goal",
    "can u turn that into a goal for me",
    "Could you handle the garage thing for me?",
    "get the party stuff done today",
    "get the tax stuff sorted pls",
    "take care of the wedding thing",
    "Deal with my weekend.",
    "look after my Saturday",
    "Sort tomorrow out for me",
    "Take care of Friday, would you?",
    "handle tonight pls",
    "remind me tomorrow at 8 about what Jo's mum said",
    "remind me on Friday at 6 of what the vet told us",
    "Packing for Lisbon:\n[ ]\n[ ]\n[ ]",
    "Gym bag:\n>\n>",
    "new note pls",
    "another entry",
]


@pytest.mark.parametrize("text", NOTHING_TO_ACT_ON)
def test_a_command_that_names_nothing_to_act_on_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the same commands with their content, a reminder whose text names where a thing is,
# a username with an underscore, templates and formats asked about or written, deeds asked about in words.
@pytest.mark.parametrize(("text", "mode"), [
    ("save my locker number which is 212", ("ACT", "memorize")),
    ("Note the code which is 7781 for the side door", ("ACT", "memorize")),
    ("Remember where the car is parked", ("ACT", "memorize")),
    ("remember my sister's flat, it's number 12", ("ACT", "memorize")),
    ("Remind me at 7 to call Jo, it's her birthday", ("ACT", "schedule")),
    ("Remind me about the parcel in the email tomorrow at 9", ("ACT", "schedule")),
    ("remind me tomorrow at 8 to ring Jo's mum", ("ACT", "schedule")),
    ("remind me at 9 to text what my boss said to the team", ("ACT", "schedule")),
    ("How do I sort tomorrow's meeting out?", ("RESPOND", None)),
    ("Save the address from the letter: 14 Elm Road, Leeds", ("ACT", "memorize")),
    ("add the milk from Aldi to my shopping list", ("ACT", "list")),
    ("Remember the photo on the fridge is from Crete", ("ACT", "memorize")),
    ("Save my username: dark_knight_99", ("ACT", "memorize")),
    ("Turn my reading plan into a goal: 20 pages a day", ("ACT", "goal")),
    ("Turn off my 7am alarm", ("ACT", "schedule")),
    ("Write me a template for a reminder email with [Name] and [Date] placeholders", ("RESPOND", None)),
    ("How do I format a date as YYYY-MM-DD in Excel?", ("RESPOND", None)),
    ("What's the difference between snake_case and camelCase?", ("RESPOND", None)),
    ("What's a good way to deal with my weekend anxiety?", ("RESPOND", None)),
    ("How should I handle next week's deadline crunch?", ("RESPOND", None)),
    ("take care of yourself", ("RESPOND", None)),
    ("New job!", ("ACKNOWLEDGE", None)),
    ("Plans changed: dinner is on Friday now, not Saturday.", ("ACKNOWLEDGE", None)),
    ("Remember the time in the email", ("CLARIFY", None)),
    ("convert it to a reminder pls", ("CLARIFY", None)),
])
def test_the_same_commands_with_their_content_or_asked_in_words_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Commands that carry their content in shapes read wrongly before: a skill's word with its last key missed, "what"
# texted, an aim handed over with "keep tabs on" or "keep an eye on", an item knocked or scrubbed off a list, a pointer
# made into a goal and filled by the next clause.
CARRYING_CONTENT = [
    ("pls remine me at 6 to feed the cat", "schedule"),
    ("remembet my bike lock code is 4512", "memorize"),
    ("show me wot i saved about the garage door", "recall"),
    ("I'm hoping to run a sub-25 5k by June, can you keep tabs on that?", "goal"),
    ("I want to read 30 books this year, keep an eye on that goal for me", "goal"),
    ("knock bread off the shopping list, we've got loads", "list"),
    ("scrub eggs off the shopping list please", "list"),
    ("make it a goal, I want to swim 2k by March", "goal"),
]


@pytest.mark.parametrize(("text", "skill"), CARRYING_CONTENT)
def test_a_command_carrying_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Guards (they passed before too): words of their own one key away, tabs kept by someone else, an aim told, a knock.
@pytest.mark.parametrize(("text", "mode"), [
    ("My dad forges knives in his shed", ("ACKNOWLEDGE", None)),
    ("I was reminded of my gran today, she loved this song", ("ACKNOWLEDGE", None)),
    ("My mum keeps tabs on everyone in the village", ("ACKNOWLEDGE", None)),
    ("I'm aiming to run a marathon next year", ("ACKNOWLEDGE", None)),
    ("Knocked off early today, the boss let us go at 3", ("ACKNOWLEDGE", None)),
])
def test_words_near_the_commands_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# News under a headline (a thing and what happened to it), and a day or a thing called hopeless: told, nothing asked.
@pytest.mark.parametrize("text", [
    "Call done: the landlord agreed to fix the damp.",
    "Book finished: took me three months but I did it",
    "Mondays are hopeless for parking round here",
    "My sense of direction is hopeless, got lost again in Leeds",
])
def test_news_under_a_headline_or_a_thing_called_hopeless_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards (they passed before too): a request under a headline, a question under a label, hopelessness felt.
@pytest.mark.parametrize(("text", "mode"), [
    ("Shift changed: can you move my alarm to 5am?", ("ACT", "schedule")),
    ("Quick question: how long do I boil an egg?", ("RESPOND", None)),
    ("I'm feeling hopeless and I don't know who to talk to", ("RESPOND", None)),
    ("everything feels hopeless since the layoff", ("RESPOND", None)),
])
def test_requests_under_a_headline_and_hopelessness_felt_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
