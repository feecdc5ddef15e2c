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
# ("shout me", "bell me"); a goal opened, a deed made the goal, a goal whose content after its colon is writing.
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
