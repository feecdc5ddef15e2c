"""Issue 31's twenty-fifth round: the kinds of message routing_tuning26's looked-at two thirds found.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# A fact handed over to be kept: put away for later ("tuck that away - ..."), kept on record or on file, the place said
# and the fact in a "that" clause ("keep it on file that ..."), filed under a heading ("file it under work: ..."), held
# on to or written down as "these two" or "this one" before a colon.
FACTS_HANDED_OVER = [
    "Tuck that away for later - the boiler reset code is 4471.",
    "Stash this one away: my locker at the gym is number 212.",
    "Salt this away for me: the plumber's cousin Dev does gas safety checks for forty quid.",
    "Keep it on file that the landlord promised a new fridge by March.",
    "Put it on the record that Marta paid her half of the deposit in cash.",
    "Kindly keep in your files that my bike frame number is WX4471.",
    "Please add to your records: the car's MOT runs out on 14 May.",
    "File it under work: my manager prefers updates on Mondays.",
    "file under the allotment: plot 17, the key is with Brenda",
    "Hang on to these three for me:\nBin day: Thursday\nRecycling: every other Monday\nGarden waste: first Friday",
    "Hold on to this one: the loft ladder pole lives behind the boiler.",
    "Note this one down: the school office opens at 8.15 on weekdays.",
    # Under a heading, for later, pinned or bookmarked, archived, parked in the brain, with "for me" before the colon.
    "Log under car: tyres changed 12 January.",
    "Note for later: the council tax reference is 88812.",
    "Put a pin in this: the electrician is called Gary, 07700 123456.",
    "Bookmark this: the best chippy in town is Harbour Fry.",
    "Archive this for me: the boiler model is Vaillant ecoTEC 831.",
    "Park this in your memory: the dog's microchip number is 9810.",
    "Make sure you remember: the recycling goes out on odd weeks.",
    "Store away for later: the tent pegs are in the blue crate.",
    "Write this in your notes: Sam is allergic to peanuts.",
]


@pytest.mark.parametrize("text", FACTS_HANDED_OVER)
def test_a_fact_handed_over_in_a_keeping_phrase_is_memorized(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "memorize")}


# What was handed over to be kept ("what I had you save", "everything I got you to store"), then shown: recited,
# repeated back, brought (back) up for me please; a stored goal pulled up with its progress.
SHOW_WHAT_WAS_HANDED_OVER = [
    "Could you repeat back everything I got you to keep about the boiler?",
    "Recite whatever I had you note about the dentist, please.",
    "Pull up whatever I had you note about the dentist, thanks",
    "I've lost what I got you to store about the van, bring it back up for us please",
    "Danke! Bring up what I had you remember about the ferry times.",
    "Bring my reading goals up with the figures so far, please.",
    "Dig my fitness goal out with the stats to date.",
    "Pull my reminders up for this Friday, I think something clashes.",
    # Found again where they are kept: dug up, fished out, looked through, read back; what was given or left with you.
    "Read me back what I asked you to hold on to about the car.",
    "Fish out the notes I had you save on the allotment.",
    "Dig up the notes I left with you on the allotment.",
    "Can you dig up what I told you about Grandma's pills?",
    "Bring back up the details I left with you about the flat.",
    "Look through what I saved about Dad's operation.",
]


@pytest.mark.parametrize("text", SHOW_WHAT_WAS_HANDED_OVER)
def test_what_was_handed_over_then_shown_recalls(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "recall")}


# A goal declared after a long lead-in ("..., it's a goal then: ...", "goal now: ...") is a goal, not a note.
@pytest.mark.parametrize("text", [
    "Right, it's a goal then: learn twenty Welsh words a week until Christmas.",
    "We talked it over and it's settled, note it for me, goal now: cycle to work three days a week.",
    "The doctor's been nagging so jot this down, it's a goal too: two alcohol-free days every week.",
    "Goal - lose 5 kilos before the wedding.",
])
def test_a_goal_declared_after_a_lead_in_is_a_goal(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "goal")}


# Items onto the shop itself, or under a "Shopping:" heading, go on the list.
@pytest.mark.parametrize("text", ["Stick bin bags on the big shop.", "pop teabags onto the weekly shop",
                                  "Shopping: bread, cheese, apples."])
def test_items_onto_the_shop_are_listed(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


# Messages that must ask: what ran short, never named ("whatever we ran out of", "the things we're short of"); a
# template slot in typographic brackets ("⟨time⟩", "【paste here】"); entries left empty under tildes or plus signs; a
# request ending on a colon with nothing after it; an entry cut off on "under", "than", "until"; a pick alone by its
# look, size or place ("The top drawer.").
NEEDS_ASKING = [
    "Put the stuff we're low on onto the shopping list.",
    "Can you add everything we've run out of to my list?",
    "Pop whatever I ran out of on the big shop, cheers.",
    "Add the things we're short of to the camping list.",
    "Store this for me: 【fact goes here】",
    "Remind me at ⟨time⟩ to call the bank",
    "Add 〈first item〉 and 〈second item〉 to the camping list",
    "Packing list for Rome:\n+\n+\n+",
    "Things for the car boot:\n~\n~",
    "Make me a packing list for Lisbon:",
    "Please add these to the DIY list:",
    "New goal: keep the weekly shop under",
    "Target: bench press more than",
    "Goal: read every night until",
    "The top drawer.",
    "Um, the second envelope.",
    "the bigger box please",
    # What a thing it cannot see holds: "what's on the whiteboard".
    "Add what's on the whiteboard to my list.",
    "Put what's in the basket on the list, please.",
    # Things of no kind from a place, or what someone named said; a value of something only pointed at; a value's kind
    # alone after "memorise" or "hang on to".
    "Hiya! Could you pop the bits from the market onto my list? Cheers x",
    "Can u add the stuff Jen said to the party list",
    "Remember the name of that place.",
    "Please memorise the code.",
    "hang on to the address for me",
]


@pytest.mark.parametrize("text", NEEDS_ASKING)
def test_a_message_that_needs_an_earlier_turn_or_its_content_asks(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Keys struck, not typed: a key held after two struck in turn, a row typed then on off it with a digit, keys held in
# turn with symbols among them, a key and a symbol struck in turn.
@pytest.mark.parametrize("text", ["asasasasddd", "jkjkjkjlll", "poiuytrewqbnm", "asdfghjklzx7cv", "7777&&&&$$",
                                  "8-8-8-8-8-2"])
def test_keys_struck_are_ignored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# News closed by a harm said not to have happened is relief, acknowledged.
@pytest.mark.parametrize("text", [
    "Moved house at the weekend, chaos, but no one got hurt.",
    "The kids did the cooking tonight and nothing caught fire.",
])
def test_relief_that_nothing_bad_happened_is_acknowledged(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Guards: the same forms with their content, as talk, or as a real worry.
@pytest.mark.parametrize(("text", "mode"), [
    ("Start a list for the garden centre: compost, bulbs, a new trowel", ("ACT", "list")),
    ("Add to my shopping list:\nmilk\neggs", ("ACT", "list")),
    ("Goal for the spring: get my 10k time under 50 minutes", ("ACT", "goal")),
    ("Add oat milk to the shopping list, we ran out of it.", ("ACT", "list")),
    ("We ran out of coffee, add it to the list.", ("ACT", "list")),
    ("The green folder is on my desk.", ("ACKNOWLEDGE", None)),
    ("The red wine was lovely.", ("ACKNOWLEDGE", None)),
    ("For the record, I never said that.", ("ACKNOWLEDGE", None)),
    ("I put the dishes away this morning.", ("ACKNOWLEDGE", None)),
    ("My grandad died last week.", ("RESPOND", None)),
    ("Nobody died but I'm still shaking after the crash.", ("RESPOND", None)),
    ("Pull the reminders for Friday up.", ("ACT", "recall")),
    ("Add the milk from Aldi to my list.", ("ACT", "list")),
    ("Save the number of the plumber, it's 07700 900123.", ("ACT", "memorize")),
])
def test_the_same_forms_with_their_content_or_as_talk_are_read_as_before(routers, text, mode):  # noqa: F811
    assert routes(routers, text) == {mode}
