"""Issue 31's twenty-ninth round: the kinds of message routing_tuning28's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# An edit of a reminder never said, after "excuse me" abroad or moved only by where it goes: which reminder?
EDIT_OF_A_POINTER = [
    "Disculpa, shift that alarm back a bit later",
    "Scusi, bump that reminder back",
    "Desculpe, push that reminder on a bit",
    "Perdón, shove that reminder forward",
    "Push that alarm back an hour",
]
# A command after "so" with no comma before it, the fact after its colon: stored.
STORED_AFTER_SO = [
    ("I always lose this so note it down: the bike lock code is 2291.", "memorize"),
    ("My memory is awful so remember this: Priya's birthday is the 4th of June.", "memorize"),
    ("I forget it every single time so keep this: the side gate code is 4410.", "memorize"),
]
# Where the person stands on a goal, shown: the goal read back, no progress recorded.
PROGRESS_SHOWN = [
    "Show me where I'm up to with my marathon goal",
    "Could you bring up how I'm doing on my goals please?",
    "Display my progress on the savings goal",
    "Can you show me how far I've got towards my Spanish target?",
]
# Things put in order with nothing named, a tag question after them: which things?
SORTED_WITH_A_TAG = [
    "Just get it all organised for me, ok?",
    "Sort the lot out for me, would you?",
    "Just get everything tidied up, yeah?",
]
# "That one" to act on "like the others": like which ones, never said here?
LIKE_THE_OTHERS = [
    "Track this one too, same as the others",
    "Keep an eye on that one as well, like the others.",
    "Watch this one as well, like the others",
]
# A long story, then a turn to a request whose object was never said here: what was said before? (Asked as a question
# at full length, "... Anyway, can you save what I told you before?", the text signals alone tie RESPOND with CLARIFY
# and the tie goes to RESPOND; the embedding decides it.)
STORY_THEN_A_POINTER = [
    "What a week, the boiler packed in and the dog got out twice through the fence. Anyway, put in what we discussed "
    "about the appointments.",
    "Long day at work, the printer jammed and my boss shouted at everyone twice before lunch. Anyway, could you put in "
    "the bits I mentioned this morning?",
    "Today was grim, the bus broke down near the retail park and the kids were ill all evening. Anyway, just put in "
    "what I told you before about the dentist.",
]


@pytest.mark.parametrize("text", EDIT_OF_A_POINTER + SORTED_WITH_A_TAG + LIKE_THE_OTHERS + STORY_THEN_A_POINTER)
def test_an_underspecified_command_asks(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


@pytest.mark.parametrize(("text", "skill"), STORED_AFTER_SO + [(text, "recall") for text in PROGRESS_SHOWN])
def test_a_command_with_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# "The usual" closing a statement as an aside, a count reached against its total with a verb whose past is its base,
# a comparison in a relative clause and an idiom's "it": told, nothing asked.
TOLD = [
    "Kids fighting over the remote all evening, the usual.",
    "Train cancelled and the replacement bus was packed - same as always.",
    "Hit 8 out of my 10 step targets this month!",
    "Read 3 of the 5 chapters tonight, halfway there",
    "Put 3 of the 5 shelves up today, knackered",
    # "..., which is more than ..." compares in a statement; an idiom's "it" is the person's own lot.
    "We walked 12 miles today, which is further than last time.",
    "Swam 40 lengths this morning, which is more than I managed all of last month",
    "Rough week but we'll cope with it.",
    "Bit of a grim Monday, but I'll get over it",
]


@pytest.mark.parametrize("text", TOLD)
def test_news_shaped_as_a_command_or_ending_on_the_usual_is_told(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# The same kinds with their content given still act, and "the usual" that a command or a bare answer leans on asks.
WITH_CONTENT = [
    ("Perdón, push my dentist reminder to Friday at 5", ("ACT", "schedule")),
    ("Entschuldigung, move the gym reminder to 7pm", ("ACT", "schedule")),
    ("Push the school run reminder forward a day", ("ACT", "schedule")),
    ("Could you show me all of my goals, please", ("ACT", "recall")),
    ("Pizza, the usual.", ("CLARIFY", None)),
    ("Remind me at 6, the usual.", ("CLARIFY", None)),
    ("Add the others to my shopping list", ("CLARIFY", None)),
    ("Read me the notes I saved on the boiler", ("ACT", "recall")),
    # A command after a dash opens a clause as after a comma.
    ("Quick one — show me my goals for this month", ("ACT", "recall")),
    ("Cheers in advance - show me every reminder I've set for next week", ("ACT", "recall")),
    ("Tea or coffee before a run, which is better?", ("RESPOND", None)),
    ("How do I get over it?", ("RESPOND", None)),
]


@pytest.mark.parametrize(("text", "expected"), WITH_CONTENT)
def test_the_same_kinds_with_content_or_a_pointer(routers, text, expected):  # noqa: F811
    assert routes(routers, text) == {expected}
