"""Issue 31's eighteenth round: the kinds of message routing_tuning19's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from services.embeddings import minilm_model_dir
from services.router import typos
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands that name nothing the assistant can act on: a program's slot left unfilled, a thing held in a photo named by
# what it shows, a nudge about what someone said (with its time after it), a list's heading over empty entries on lines
# of their own, a whole undertaking asked for as the state it should be in, a list set up with nothing on it.
NOTHING_TO_ACT_ON = [
    "Remember this: #PASSWORD#",
    "put {0} on my packing list",
    "remind me to {1} at 6pm",
    "save everything on the noticeboard photo",
    "add everything in my fridge pic to the shopping list",
    "Nudge me at 9 tomorrow about what Kemi said",
    "ping me about what the landlord told us, Friday at noon",
    "Garden centre list\n-\n-\n-",
    "Weekend jobs\n1.\n2.\n3.",
    "Get my summer organised.",
    "Set me up a list",
    "get the house sorted out for me",
]


@pytest.mark.parametrize("text", NOTHING_TO_ACT_ON)
def test_a_command_that_names_nothing_to_act_on_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the same commands with their content, a hashtag, a percentage, a photo kept, a
# nudge with its text, a list's heading with its entries, a state asked about in words.
@pytest.mark.parametrize(("text", "mode"), [
    ("Remember this: the bike lock is 4471", ("ACT", "memorize")),
    ("put sun cream and a hat on my packing list", ("ACT", "list")),
    ("add #milk and #eggs to my shopping list", ("ACT", "list")),
    ("remind me at 6pm to check the 5% discount code", ("ACT", "schedule")),
    ("Remember the photo on the landing is of my grandad", ("ACT", "memorize")),
    ("Nudge me at 9 tomorrow to ring Kemi", ("ACT", "schedule")),
    ("Garden centre list\n- compost\n- seed trays", ("ACT", "list")),
    ("How do I get my finances organised?", ("RESPOND", None)),
    ("Got my summer organised at last!", ("ACKNOWLEDGE", None)),
])
def test_the_same_commands_with_their_content_or_asked_in_words_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Commands that carry their content in shapes read wrongly before: a list set up for the person with its items, items
# slipped or tucked onto a list, a list wished for mid-sentence with its items after a colon, a time counted from
# now, a skill's word with a stray key inside it, an aim kept as a goal, stored things brought up with a clause after.
CARRYING_CONTENT = [
    ("Set me up a list for the allotment: twine, slug pellets, broad bean seeds", "list"),
    ("set us up a packing list - passports, adapters, sun cream", "list"),
    ("Slip a jar of honey onto the market list", "list"),
    ("tuck two spare fuses onto the van list", "list"),
    ("After the match we need a list: ice packs, tape, oranges", "list"),
    ("remind me 45 minutes from now to take the bread out", "schedule"),
    ("Ping me two hours from now to move the car", "schedule"),
    ("rememnber my gate code is 1907", "memorize"),
    ("I want to swim a mile by May, keep that as a goal for me", "goal"),
    ("bring my reminders up, I need to plan the week", "recall"),
]


@pytest.mark.parametrize(("text", "skill"), CARRYING_CONTENT)
def test_a_command_carrying_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Guards (they passed before too): a time said long after now, a thing kept that is not a goal, something brought up
# that is not stored.
@pytest.mark.parametrize(("text", "mode"), [
    ("Years from now we'll laugh about this", ("ACKNOWLEDGE", None)),
    ("keep that as a note: the boiler was serviced in May", ("ACT", "memorize")),
    ("My boss brought my pay rise up at the meeting today", ("ACKNOWLEDGE", None)),
])
def test_words_near_the_commands_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


def test_no_stray_key_the_router_corrects_is_a_word_of_its_own():
    vocabulary = set((minilm_model_dir() / "vocab.txt").read_text(encoding="utf-8").split())
    assert set(typos._INSERTED) & vocabulary == set()
    assert [typos.correct(word) for word in ("remainder", "remembers", "calendars", "scheduled")] == [
        "remainder", "remembers", "calendars", "scheduled"]


# News told: wonder at it with "would you look at that", a worry of before that names what the news is about.
@pytest.mark.parametrize("text", [
    "Would you look at that, the hens are laying again.",
    "would you just look at this! first snowdrop of the year",
    "The lump I was worried about turned out to be nothing.",
    "the exam we were so nervous about went really well",
])
def test_news_with_wonder_or_a_worry_that_passed_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards (they passed before too): a request to look at something, a worry of now.
@pytest.mark.parametrize(("text", "mode"), [
    ("Would you look at my CV and tell me what's missing?", ("RESPOND", None)),
    ("I was so worried about my son last night and I still can't sleep", ("RESPOND", None)),
    ("The surgery I'm nervous about is on Monday and I can't stop shaking", ("RESPOND", None)),
])
def test_a_look_asked_for_and_a_worry_of_now_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
