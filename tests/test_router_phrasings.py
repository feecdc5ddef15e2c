"""The miss classes of issue 31's fifth and sixth rounds, each with its signal and a counter-example (signals alone).

Every message here was written for this file, none is a line of a tuning set (the last test checks): each class is
a kind of message the router used to send to the wrong mode, and each test names what tells it apart.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.routing import ROUTING_SET, TUNING_SETS, load_rows
from services.embeddings import minilm_model_dir
from services.router.mash import is_mash_token
from services.router.signals import text_view
from tests import test_router_classes as classes

ROOT = Path(__file__).resolve().parents[1]
router = classes.router  # the fixture: the shipped weights, text signals alone
route, signals_of = classes.route, classes.signals_of


STORING_IN_OTHER_LANGUAGES = [
    "bitte notieren: the gate code at my mum's flat is 4471",
    "apunta: the dentist is Dr. Ruiz on Calle Mayor",
    "por favor guarda esto: my locker number is 212",
    "merk dir das: Lenas Geburtstag ist am 3. Mai",
]


@pytest.mark.parametrize("text", STORING_IN_OTHER_LANGUAGES)
def test_a_storing_verb_of_another_language_before_a_colon_stores_what_follows(router, text):
    assert route(router, text) == ("ACT", "memorize")


@pytest.mark.parametrize("text", ["bitte merken:", "guarda esto:", "please store:", "save:"])
def test_a_storing_verb_before_an_empty_colon_names_nothing(router, text):
    assert signals_of(text)["slot_missing"] == 1.0
    assert route(router, text)[0] == "CLARIFY"


def test_a_note_to_self_is_stored():
    assert signals_of("Note to self: order more cake boxes before the weekend")["skill_remember"] == 1.0
    assert signals_of("Note: I'm asking for a friend. How do I get a mortgage?")["skill_remember"] == 0.0


@pytest.mark.parametrize("text", [
    "oat milk and bananas on the shopping list please",
    "tea bags onto the groceries list, thanks",
    "nappies and wipes to my to-do list pls",
])
def test_items_asked_onto_a_named_list_without_a_verb_are_a_list_write(router, text):
    signals = signals_of(text)
    assert signals["skill_list"] and signals["slots_complete"]
    assert route(router, text) == ("ACT", "list")


@pytest.mark.parametrize(("text", "mode"), [
    ("there's milk on the list, thanks", "ACKNOWLEDGE"),  # told, not asked
    ("Put both on the shopping list.", "CLARIFY"),  # both of what?
    ("Add all of them to my list.", "CLARIFY"),
])
def test_what_a_list_write_without_items_is(router, text, mode):
    assert route(router, text)[0] == mode


def test_a_quantifier_names_no_new_item_but_says_which_stored_ones():
    assert signals_of("Stick them all on my list please.")["slot_missing"] == 1.0
    assert signals_of("Cancel all my reminders.")["slots_complete"] == 1.0
    assert signals_of("Add all the tent pegs to the list")["slots_complete"] == 1.0


@pytest.mark.parametrize("text", ["show my saved passwords", "pull up my stored info please",
                                  "list all the recorded readings"])
def test_anything_called_kept_is_shown_from_the_store(router, text):
    assert signals_of(text)["shows_stored"] == 1.0
    assert route(router, text) == ("ACT", "recall")


@pytest.mark.parametrize("text", [
    "Devise a study timetable for my exams next month.",
    "Draw up a cleaning rota for our flat of five.",
    "Make a daily routine for a toddler.",
    "Design a logo idea for my bakery",
    "Propose three names for my podcast",
])
def test_drawing_up_a_plan_or_designing_something_is_a_writing_task(router, text):
    assert route(router, text)[0] == "RESPOND"


@pytest.mark.parametrize("text", ["Make a schedule: gym Monday 6pm, swim Wednesday 7am",
                                  "Schedule a call with Ben tomorrow at 3"])
def test_a_schedule_with_its_entries_or_a_booking_still_acts(router, text):
    assert route(router, text) == ("ACT", "schedule")


@pytest.mark.parametrize("text", ["Guess what I finally did?? quit my job!",
                                  "guess where we're going this summer?? LISBON"])
def test_guess_who_announces_news_and_asks_nothing(router, text):
    assert signals_of(text)["question"] == 0.0
    assert route(router, text)[0] == "ACKNOWLEDGE"


def test_a_description_that_points_back_ends_with_its_sentence(router):
    assert signals_of("Remember the thing I mentioned yesterday? add it to my list.")["points_back"] == 1.0
    assert route(router, "Remember the thing I mentioned yesterday? add it to my list.")[0] == "CLARIFY"
    # "what I told you about my job" names it: the description goes on.
    assert signals_of("erase what I told you about my job, please")["points_back"] == 0.0


def test_typed_slips_of_a_list_write_and_a_british_half_past(router):
    assert route(router, "ad eggs to shoping list") == ("ACT", "list")
    assert route(router, "I saw an ad on the bus today")[0] == "ACKNOWLEDGE"
    assert signals_of("remind me at half five to pick up the dry cleaning")["has_time"] == 1.0
    assert signals_of("I read for half an hour, then slept")["has_time"] == 0.0


@pytest.mark.parametrize("text", [
    "I feel like I'm failing at everything lately",
    "I'm at my wits' end with the neighbours",
    "I keep having nightmares about the accident",
    "my heart is racing and I can't breathe properly",
    "nobody cares about me",
])
def test_distress_in_more_words_wants_an_answer(router, text):
    assert signals_of(text)["distress"] == 1.0
    assert route(router, text)[0] == "RESPOND"


@pytest.mark.parametrize("text", ["the new printer is a nightmare lol", "I'm exhausted but happy, great weekend"])
def test_a_passing_complaint_or_mood_is_told(router, text):
    assert signals_of(text)["distress"] == 0.0
    assert route(router, text)[0] == "ACKNOWLEDGE"


def test_keyboard_walks_and_one_row_mashing_are_no_message(router):
    for token in ("poiuytrewq", "wsxedcrfv", "mnbvcxzlkj"):
        assert is_mash_token(token), token
        assert route(router, token)[0] == "IGNORE"
    assert not is_mash_token("typewriter") and not is_mash_token("powdered")


def test_no_word_of_the_vocabulary_is_a_keyboard_walk_or_one_row_mash():
    vocabulary = [word for word in (minilm_model_dir() / "vocab.txt").read_text(encoding="utf-8").split()
                  if word.isascii() and word.isalpha() and len(word) >= 6]
    # Two words the older rules already took for mashing (rare letter pairs); the walks and rows add none.
    assert [word for word in vocabulary if is_mash_token(word)] == ["oxygen", "laszlo"]


@pytest.mark.parametrize("name", ["test_router_phrasings.py", "test_router_phrasings7.py", "test_router_phrasings8.py",
                                  "test_router_phrasings9.py", "test_router_phrasings10.py",
                                  "test_router_phrasings11.py", "test_router_phrasings12.py",
                                  "test_router_phrasings13.py", "test_router_phrasings14.py",
                                  "test_router_phrasings15.py", "test_router_phrasings16.py",
                                  "test_router_phrasings17.py", "test_router_phrasings18.py",
                                  "test_router_phrasings19.py", "test_router_phrasings20.py",
                                  "test_router_phrasings21.py", "test_router_phrasings22.py",
                                  "test_router_phrasings23.py", "test_router_phrasings24.py",
                                  "test_router_phrasings25.py", "test_router_phrasings26.py",
                                  "test_router_phrasings27.py", "test_router_phrasings28.py",
                                  "test_router_phrasings29.py", "test_router_asked_by_people.py"])
def test_no_message_here_is_a_line_of_a_labelled_set(name):
    source = (Path(__file__).parent / name).read_text(encoding="utf-8")
    lines = {" ".join(text_view(row["text"]).words) for path in (ROUTING_SET, *TUNING_SETS) for row in load_rows(path)}
    quoted = {" ".join(text_view(text).words) for text in re.findall(r'"([^"\n]{12,})"', source)}
    assert sorted(quoted & lines) == []


@pytest.mark.parametrize("text", ["save the number", "remember the code please", "note the address",
                                  "could you set up a goal for me?", "do what you did last week"])
def test_a_thing_named_by_its_kind_alone_or_a_deed_never_told_needs_asking(router, text):
    assert route(router, text)[0] == "CLARIFY"


@pytest.mark.parametrize("text", ["save the number 07700 900123", "remember the code is 4471",
                                  "note the address: 12 Elm Road"])
def test_the_same_thing_with_its_value_is_stored(router, text):
    assert route(router, text) == ("ACT", "memorize")


# Issue 31's sixth round (routing_tuning6's looked-at thirds): each class with what tells it apart.

@pytest.mark.parametrize("text", [
    "put our regulars on the shopping list",  # the person's regulars were never listed
    "add the staples to the groceries pls",
    "Same again next Friday",
    "add the measurements to my notes",  # which measurements?
    "Put the names in please",
    "send the photos to Gran",
    "add the stuff we need for the party to my list",
])
def test_things_named_by_their_kind_alone_or_as_the_usual_need_asking(router, text):
    assert route(router, text)[0] == "CLARIFY"


@pytest.mark.parametrize(("text", "mode"), [
    ("add the dates of the school holidays to my list: 3 April, 18 July", ("ACT", "list")),  # the dates follow
    ("add milk, the usual cereal and bread to my shopping list", ("ACT", "list")),
    ("what are the ingredients for a carbonara?", ("RESPOND", None)),  # asked, not commanded
    ("sent the details to the landlord this morning", ("ACKNOWLEDGE", None)),  # told
])
def test_the_same_kinds_named_or_not_commanded(router, text, mode):
    assert route(router, text) == mode


@pytest.mark.parametrize("text", ["bump it forward two days", "push it back a week please",
                                  "shift it a fortnight later", "the later train is easier for me, book it",
                                  "the cheaper one looks fine, go with it", "option 2 please",
                                  "ok let's go with choice C", "put that film on my watch list"])
def test_a_move_a_choice_or_a_command_on_a_pointer_needs_what_was_offered(router, text):
    assert signals_of(text)["unresolved_reference"] == 1.0
    assert route(router, text)[0] == "CLARIFY"


@pytest.mark.parametrize(("text", "mode"), [
    ("pushed my car up the hill in the snow, what a morning", "ACKNOWLEDGE"),  # a moving verb told, not asked
    ("what does plan B mean as an idiom?", "RESPOND"),
    ("put Dune on my watch list", "ACT"),  # the film named
])
def test_moving_verbs_and_choices_with_their_content(router, text, mode):
    assert route(router, text)[0] == mode


@pytest.mark.parametrize(("text", "mode"), [
    ("thanks! now do the others", ("CLARIFY", None)),
    ("cheers, send it over", ("CLARIFY", None)),
    ("gracias, and the other one too", ("CLARIFY", None)),
    ("thanks! also add bin bags to the shopping list", ("ACT", "list")),
    ("thanks, will try that tonight", ("ACKNOWLEDGE", None)),  # "(I) will try": no command, no question
    ("thanks, that helped loads", ("ACKNOWLEDGE", None)),  # (was "… a lot": a line of routing_tuning19 since)
])
def test_a_thanks_before_a_command_leaves_the_command_a_command(router, text, mode):
    assert route(router, text) == mode


@pytest.mark.parametrize(("text", "mode"), [
    ("same as Priya's", "CLARIFY"), ("like Tom's", "CLARIFY"), ("ok now the same for the night rota", "CLARIFY"),
    ("My new phone is the same as Priya's, funny", "ACKNOWLEDGE"),
    ("the rules are the same for everyone here", "ACKNOWLEDGE"),
])
def test_the_same_as_something_never_said_needs_it(router, text, mode):
    assert route(router, text)[0] == mode


@pytest.mark.parametrize("text", ["show me the gate codes I've stored", "print out my saved recipes",
                                  "read back the notes I asked you to keep about the boiler",
                                  "list everything you've memorized about my dad"])
def test_anything_named_as_kept_is_read_back(router, text):
    assert signals_of(text)["shows_stored"] == 1.0
    assert route(router, text) == ("ACT", "recall")


@pytest.mark.parametrize(("text", "skill"), [
    ("note to self but store it: the van key is in the blue tin", "memorize"),
    ("so tired today. but remember this: the bin day is Tuesday", "memorize"),
    ("I need you to hold on to this: my NI number is QQ123456C", "memorize"),
    ("can you stick a note in your memory that the ram goes in on 5 November", "memorize"),
    ("Goal for the summer: swim 2km without stopping. Track it please.", "goal"),
    ("set me a target of marking 30 essays a day", "goal"),
    ("I want to hit 10,000 steps a day, can you track that?", "goal"),
    ("buzz me at 7 to take my pills", "schedule"),
    ("could u ad bred and eggs to the shoping list", "list"),
])
def test_commands_in_more_words_carry_their_content(router, text, skill):
    assert route(router, text) == ("ACT", skill)


@pytest.mark.parametrize("text", ["could you put a couple of things on my list?",
                                  "could you arrange something for Saturday"])
def test_a_number_of_things_or_something_for_a_day_names_nothing(router, text):
    assert signals_of(text)["names_nothing"] == 1.0
    assert route(router, text)[0] == "CLARIFY"


def test_a_number_of_named_things_is_a_list_write(router):
    assert route(router, "could you put a couple of bananas on my list?") == ("ACT", "list")


@pytest.mark.parametrize("text", ["tips for keeping a sourdough starter alive", "gift ideas for a retiring teacher",
                                  "meaning of 'sonder'", "distance from Lisbon to Porto by train",
                                  "random question, is a tomato a fruit", "quick q - do cats see colour",
                                  "Remind me how to wire a plug, I never remember which is live",
                                  "make a checklist for a first-time lambing season"])
def test_a_query_typed_as_its_topic_or_announced_wants_an_answer(router, text):
    assert route(router, text)[0] == "RESPOND"


@pytest.mark.parametrize(("text", "mode"), [
    ("the height of the garage door is 2.1m, remember that", ("ACT", "memorize")),  # a fact handed over
    ("The distance from my flat to work is only 2km, love it", ("ACKNOWLEDGE", None)),  # a fact told
    ("Remind me at 6 what I need to buy, I always forget", ("ACT", "schedule")),
    ("camping list - tent, torch, matches", ("ACT", "list")),  # a hyphen with spaces still separates
])
def test_the_same_words_stating_a_fact_or_a_command(router, text, mode):
    assert route(router, text) == mode


@pytest.mark.parametrize(("text", "mode"), [
    ("idk what to do anymore, my best friend won't speak to me", "RESPOND"),
    ("dunno why I even try, nobody at work listens to me", "RESPOND"),
    ("I feel sick every time I walk into that office", "RESPOND"),
    ("a bit anxious about the driving test but I'll be fine", "ACKNOWLEDGE"),
    ("nervous for my presentation tomorrow but I've prepared well", "ACKNOWLEDGE"),
    ("bit worried about the vet bill, nothing major", "ACKNOWLEDGE"),
    ("I'm so anxious I can't sleep and I don't know what to do", "RESPOND"),  # no reassurance
])
def test_distress_in_short_forms_and_a_mood_with_its_own_reassurance(router, text, mode):
    assert route(router, text)[0] == mode

