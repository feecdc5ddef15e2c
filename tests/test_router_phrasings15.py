"""Issue 31's fifteenth round: the kinds of message routing_tuning16's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Keys struck at one end of a run of symbols that keeps changing key, or runs of keys with no vowel and no letter pair
# English has, joined by symbols: no message.
MASHED = [";;''//;;lk", "+=+=+=7=7", "wvx##qzk", "zxq!!!vbk"]


@pytest.mark.parametrize("text", MASHED)
def test_keys_among_changing_symbols_or_vowelless_chunks_are_ignored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# Guards (they passed before too): sentence marks alone around a word, one change of symbol, chunks with words in them.
@pytest.mark.parametrize("text", ["ok?!?!?!?!", "5/5!!!!!!", "brb...ttyl", "kfc/bbq"])
def test_a_reply_among_marks_or_short_forms_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# A deed done to the person, told in the past tense after news ("Took me ...", "Cost us ..."): no request.
PAST_DEEDS_TO_ME = [
    "Repainted the shed at last. Took me three Saturdays.",
    "Sold the old bike on Sunday. Got me ninety quid.",
]


@pytest.mark.parametrize("text", PAST_DEEDS_TO_ME)
def test_a_past_deed_done_to_me_after_news_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# A guard (it passed before too): a command to the person after news still asks.
def test_a_command_after_news_still_acts(routers):  # noqa: F811
    assert routes(routers, "Boxes are all packed. Remind me at 5 to ring the removals firm") == {("ACT", "schedule")}


# A machine that "died" broke down, and a stress said with "but I'll get through it": a day or a mood told.
TOLD_NOT_DISTRESS = [
    "Mad shift at the depot. Two vans late, the scanner died before ten and the forklift was out all afternoon. "
    "Feet up now with a brew.",
    "Bit stressed about the driving test but I'll get through it.",
    "Nervous about the results on Friday but we'll pull through.",
]


@pytest.mark.parametrize("text", TOLD_NOT_DISTRESS)
def test_a_machine_dying_or_a_stress_with_its_reassurance_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards (they passed before too): a person who died, a stress with no way through it.
@pytest.mark.parametrize("text", ["My grandad died last week and I keep crying at work.",
                                  "So stressed about the driving test that I can't sleep."])
def test_a_death_or_a_stress_unreassured_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# Stored things shown tersely ("show goals"), with the particle after them ("pull my notes ... up"), or by "recall".
SHOWN_STORED = [
    "show goals",
    "list reminders for tomorrow",
    "Pull my notes about the allotment up please",
    "dig my reminders for next week out",
    "Recall everything you've stored about my car insurance",
    "recall all the notes I've saved on the loft conversion",
]


@pytest.mark.parametrize("text", SHOWN_STORED)
def test_stored_things_shown_tersely_or_with_a_particle_or_recalled_act(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "recall")}


# Guards (they passed before too): notes on how to do something, notes pulled out of a drawer.
@pytest.mark.parametrize(("text", "mode"), [
    ("show notes on how to tie a bowline", ("RESPOND", None)),
    ("I'll pull my notes out of the drawer tonight", ("ACKNOWLEDGE", None)),
])
def test_notes_not_stored_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# A goal asked for as a thing with what it is after a dash or colon; one's own aim stated, then handed over to track.
GOALS = [
    "I'd like a goal please - cycle to work every Friday until the summer",
    "I want a goal please — drink two litres of water a day",
    "My aim is to walk the Pennine Way by September. Can you keep track of it?",
    "Our target for the bake sale is 300 pounds by Friday, please track that.",
]


@pytest.mark.parametrize("text", GOALS)
def test_a_goal_asked_for_as_a_thing_or_an_aim_handed_over_acts(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "goal")}


# Guards (they passed before too): a target told with no request, a goal asked for ideas, a goal after a colon.
@pytest.mark.parametrize(("text", "mode"), [
    ("My target is to swim a mile by Easter.", ("ACKNOWLEDGE", None)),
    ("I'd like a goal to aim for this year, any ideas?", ("RESPOND", None)),
    ("Can I have a new goal: read a chapter every night", ("ACT", "goal")),
])
def test_a_target_told_or_a_goal_asked_about_or_given_after_a_colon_is_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# A list's items given, then a clause ending on its own preposition ("what Dad asked for"): nothing cut off.
STRANDED = [
    "Please add bin bags, bleach and sponges to the cleaning list before I forget what Dad asked for.",
    "Put tape, string and scissors on my craft list, the bits the kids keep begging for.",
]


@pytest.mark.parametrize("text", STRANDED)
def test_items_then_a_clause_ending_on_a_preposition_act(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


# Guards (they passed before too): a command cut off on its preposition or article.
@pytest.mark.parametrize("text", ["Add glue and card to the", "can you remind me at 6 to"])
def test_a_command_cut_off_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A form's instruction left where the content goes ("INSERT ... HERE"), or a command's object held in something the
# conversation cannot see (a screenshot, an attachment).
NOTHING_GIVEN = [
    "remember that ENTER DETAIL HERE",
    "Set a goal to INSERT GOAL HERE",
    "Put everything in this screenshot on my to-do list",
    "Add everything in the voice note to my to-do list",
]


@pytest.mark.parametrize("text", NOTHING_GIVEN)
def test_a_form_instruction_or_content_held_unseen_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): "here" as a place in a fact, a fact about a photo handed over after a colon.
@pytest.mark.parametrize("text", ["Remember that I keep the spare key here",
                                  "Save this: everything in the photo album is from 2019"])
def test_a_fact_with_here_or_about_a_photo_is_stored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "memorize")}


# A choice made among offers never made here ("let's go with 12 then"), and a deed on things named only by where they
# belong ("all the work stuff"): which?
WHICH = [
    "Let's go with 12 then.",
    "ok I'll stick with B",
    "Can you deal with all the work stuff?",
    "Could you take care of the garden stuff for me?",
    "please see to all the school things",
]


@pytest.mark.parametrize("text", WHICH)
def test_a_choice_never_offered_or_stuff_named_by_its_place_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): a plan with whom, asking how to deal with stuff.
@pytest.mark.parametrize(("text", "mode"), [
    ("Going with my sister to the coast on Saturday.", ("ACKNOWLEDGE", None)),
    ("How do I deal with all the baby stuff piling up?", ("RESPOND", None)),
])
def test_going_with_someone_or_asking_how_to_deal_is_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
