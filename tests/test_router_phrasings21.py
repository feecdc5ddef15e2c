"""Issue 31's twenty-first round: the kinds of message routing_tuning22's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# Commands that carry their content in words read as talk before: a fact held on to, a memo taken, something stashed
# in the assistant's memory, a fact recorded in a clause opened by "so"; a call asked for at a time in other words
# ("shout me", "bell me", "I need reminding at ..."); a goal opened, a deed made the goal, a goal whose content after
# its colon is writing, a goal's target given as a field.
CARRYING_CONTENT = [
    ("Hold on to the fact that the boiler engineer is called Marek.", "memorize"),
    ("Hang on to the info that the spare car key is in the biscuit tin.", "memorize"),
    ("Take a memo: Priya's flat is on the fourth floor.", "memorize"),
    ("Make a memo: the library books are due back on the 14th.", "memorize"),
    ("Stash this in your memory: the garage door code is 7781.", "memorize"),
    ("Stow this away in your memory: Sam can't eat coriander.", "memorize"),
    ("The plumber finally rang back, so record that the new boiler part arrives Thursday.", "memorize"),
    ("Shout me at half six to take the bread out.", "schedule"),
    ("Bell me tomorrow at 9 to phone the garage about the tyres.", "schedule"),
    ("Holler at me in 20 minutes to check the oven.", "schedule"),
    ("Can you open a target for me? Save 500 pounds by Christmas.", "goal"),
    ("Make cycling to work twice a week a goal for me.", "goal"),
    ("pls make drinking 2 litres of water a day my target", "goal"),
    ("Log this goal for me: write one chapter of my thesis each month.", "goal"),
    ("Set this target of mine: draft a page of my memoir every Sunday.", "goal"),
    ("I need reminding at 6pm to take the chicken out of the freezer.", "schedule"),
    ("Target: 10,000 steps a day. Deadline: end of March. Please track it.", "goal"),
]


@pytest.mark.parametrize(("text", "skill"), CARRYING_CONTENT)
def test_a_command_carrying_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Guards (they passed before too): the same words as talk, news, a writing task or a question about the world.
@pytest.mark.parametrize(("text", "mode"), [
    ("Hold on to your hat, the caravan sold in a day!", ("ACKNOWLEDGE", None)),
    ("I wrote a memo for the whole team this morning.", ("ACKNOWLEDGE", None)),
    ("So I recorded that song we were practising, it sounds decent.", ("ACKNOWLEDGE", None)),
    ("How do people keep hold of the facts they read?", ("RESPOND", None)),
    ("My boss will shout at me at 9 if I'm late again.", ("ACKNOWLEDGE", None)),
    ("Why do people shout at each other in traffic?", ("RESPOND", None)),
    ("Write a goal-setting poem for my class.", ("RESPOND", None)),
    ("Draft me a few goals a new manager could set for their team.", ("RESPOND", None)),
    ("How do I make exercise a habit?", ("RESPOND", None)),
    ("Can you open a PDF?", ("RESPOND", None)),
])
def test_the_same_words_as_talk_or_a_question_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}


# Commands that name nothing the assistant can act on: entries held on a card, a label or a board the conversation
# cannot see (named by their kind, "that are written on ..."), a time given as one before it ("the same time as last
# Friday"), a shell's template slots, a reminder needed about something never said, an empty form whose field is a
# goal's target, a whole holiday or a run of things handed over with only why.
NOTHING_TO_ACT_ON = [
    "Set up the appointments that are written on the clinic card in this picture.",
    "Save the details that are printed on the label in my last photo.",
    "Set the alarm for the same time as last Friday.",
    "Put the dentist reminder at the same time as the last one.",
    "Save this: $(FACT)",
    "I need reminding about the thing, you know the one.",
    "I'll need reminding about that stuff at some point.",
    "Target:\nDeadline:",
    "Handle Easter for me this year.",
    "Deal with the garden stuff, I can't be bothered.",
    "Take care of the house things, I'm too tired.",
]


@pytest.mark.parametrize("text", NOTHING_TO_ACT_ON)
def test_a_command_that_names_nothing_to_act_on_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A symbol key held down with a key or two struck at its end, a row of keys run along and on for a key or two off it.
@pytest.mark.parametrize("text", ["~~~~~~~~~2e", "######4r", "qpwoeirutyvb"])
def test_keys_held_or_run_along_a_row_are_mashing(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# Thanks said as a clause of its own after "nice one" or "good one": the "one" points at nothing to resolve.
@pytest.mark.parametrize("text", ["Nice one, really appreciated.", "Good one, appreciated!", "Nice one, very kind."])
def test_thanks_said_as_a_clause_of_its_own_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards: the same forms with their content, thanks for a reminder given, a holiday's task asked about, being
# appreciated or kind said of someone, a question about kindness.
@pytest.mark.parametrize(("text", "mode"), [
    ("Remind me at 7 tomorrow to set the table, same as always we eat at 8.", ("ACT", "schedule")),
    ("Add everything for the barbecue to the shopping list: burgers, buns, charcoal.", ("ACT", "list")),
    ("Thanks for reminding me about the chicken!", ("ACKNOWLEDGE", None)),
    ("Handle Christmas dinner for ten people: what quantities should I buy?", ("RESPOND", None)),
    ("Deal with the school forms by Friday, remind me at 8 tomorrow.", ("ACT", "schedule")),
    ("!!!!!!!!ok", ("ACKNOWLEDGE", None)),
    ("I finally felt appreciated at work today.", ("ACKNOWLEDGE", None)),
    ("The nurse was so kind", ("ACKNOWLEDGE", None)),
    ("Is it very kind to lie to spare feelings?", ("RESPOND", None)),
])
def test_the_same_forms_with_their_content_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
