"""The miss classes of issue 31's second round, each with its signal and a counter-example (signals alone).

Every message here was written for this file, none is a line of a labelled set: each class is a kind of
message the router used to send to the wrong mode, and each test names what tells it apart.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from services.embeddings import minilm_model_dir
from services.router import signals as rs
from services.router import typos
from services.router.mode_router import ModeRouter, context_from_record
from services.router.signals import RoutingContext
from services.router.skills import skill_explanation, skill_hint

ROOT = Path(__file__).resolve().parents[1]
GREETING = [["hello", "Hi there! How can I help?"]]


@pytest.fixture(scope="module")
def router(tmp_path_factory) -> ModeRouter:
    target = tmp_path_factory.mktemp("configs")
    for name in ("router.toml", "router_exemplars.toml"):
        shutil.copy(ROOT / "configs" / name, target / name)
    return ModeRouter(target)


def signals_of(text: str, **context) -> dict[str, float]:
    return rs.collect_signals(RoutingContext(text=text, **context))


def route(router: ModeRouter, text: str, context: dict | None = None) -> tuple[str, str | None]:
    decision = router.route(context_from_record(text, context))
    return decision.mode, skill_hint(text, decision.signals) if decision.mode == "ACT" else None


@pytest.mark.parametrize(("text", "name"), [
    ("Hardware list: hinges, wood glue, sandpaper", "hardware list, a colon, its items"),
    ("party list - balloons, candles, streamers", "a dash instead of a colon"),
    ("I need a list for the school trip. lunchbox, raincoat, wellies", "the items in a sentence of their own"),
    ("groceries: leeks, butter, stock cubes", "groceries"),
    ("need these on the hardware list: screws, rawlplugs", "after 'on the X list'"),
])
def test_a_list_with_its_items_and_no_verb_is_a_list_write(router, text, name):
    signals = signals_of(text)
    assert signals["skill_list"] and signals["action_request"] and signals["slots_complete"], name
    assert route(router, text) == ("ACT", "list")


def test_a_colon_after_the_word_list_in_a_question_is_no_list_write(router):
    assert route(router, "My to-do list is huge: how do I pick what to do first?")[0] == "RESPOND"


def test_a_greeting_names_nothing_a_pronoun_could_point_at(router):
    assert route(router, "Save it.", {"working_memory": GREETING})[0] == "CLARIFY"
    said = [["my bike lock code is 7741", "Got it."]]
    assert route(router, "Save it.", {"working_memory": said}) == ("ACT", "memorize")


@pytest.mark.parametrize("text", ["use the second option", "and the rest?", "do the same for the last ones",
                                  "go back to what we were saying"])
def test_a_description_that_points_back_needs_an_earlier_turn(router, text):
    assert signals_of(text)["unresolved_reference"] == 1.0
    assert route(router, text)[0] == "CLARIFY"
    earlier = [["Which is better for a beginner, a road bike or a gravel bike?", "A gravel bike is more forgiving."]]
    assert signals_of(text, working_memory=earlier)["resolved_reference"] == 1.0


def test_the_time_and_the_weather_it_points_at_nothing(router):
    assert signals_of("what time is it in Lima?")["has_reference"] == 0.0
    assert route(router, "is it going to snow tomorrow?")[0] == "RESPOND"


@pytest.mark.parametrize(("text", "skill"), [
    ("what have you got stored on me?", "introspect"),
    ("list everything you keep about me", "introspect"),
    ("is there anything in your memory about my landlord?", "recall"),
    ("what was the café I mentioned last week?", "recall"),
    ("dig through your memory for my insurance number", "recall"),
])
def test_reading_what_the_assistant_holds_without_an_earlier_turn(router, text, skill):
    assert route(router, text) == ("ACT", skill)


@pytest.mark.parametrize("text", [
    "What's the smartest way to schedule revision before finals?",
    "Are phone reminders better than sticky notes?",
    "I keep losing my lists. Is a whiteboard better?",
    "Do you remember when music came on cassettes? feels like yesterday",
])
def test_a_general_question_in_a_skills_words_is_answered(router, text):
    signals = signals_of(text)
    assert signals["general_question"] == 1.0 and signals["action_request"] == 0.0
    assert route(router, text)[0] == "RESPOND"
    assert "(general_question): nothing to run" in skill_explanation(text, signals)  # what `engram route` shows


@pytest.mark.parametrize(("text", "skill"), [
    ("Any reminders tomorrow?", "schedule"),  # picks the person's own out, with a time
    ("what are my goals at the moment?", "goal"),  # about "my" things
    ("Could you set a reminder for 5pm to stretch?", "schedule"),  # a request form
])
def test_questions_about_the_persons_own_things_still_act(router, text, skill):
    assert signals_of(text)["general_question"] == 0.0
    assert route(router, text) == ("ACT", skill)


@pytest.mark.parametrize("text", ["Please log that as a goal.", "make that a goal", "keep track of that goal"])
def test_keeping_what_was_said_as_a_goal(router, text):
    wish = [["I'd love to cycle to work three days a week", "That's a healthy plan!"]]
    assert route(router, text, {"working_memory": wish}) == ("ACT", "goal")


def test_a_stored_thing_named_by_its_time_says_which_one(router):
    assert route(router, "push my 8am reminder to 9am") == ("ACT", "schedule")
    assert route(router, "Push the reminder.")[0] == "CLARIFY"


@pytest.mark.parametrize(("text", "mode"), [
    ("ping me at 4", "CLARIFY"),  # the reminder's own verb is no task
    ("I'd like you to remember something.", "CLARIFY"),  # "I'd" is no thing to remember
    ("please save: the boiler pressure should be 1.5 bar", "ACT"),  # a storing verb, a colon, the payload
    ("Note: I'm only asking out of curiosity. Why is the sky blue?", "RESPOND"),  # a remark, then a question
    ("wake me up at 6:30", "ACT"),  # waking is the task itself
])
def test_what_a_command_names(router, text, mode):
    assert route(router, text)[0] == mode


@pytest.mark.parametrize(("text", "mode"), [
    ("that works for me", "ACKNOWLEDGE"), ("how's your week going?", "ACKNOWLEDGE"), ("qqqqwwww", "IGNORE")])
def test_reactions_and_mashing(router, text, mode):
    assert route(router, text)[0] == mode
    assert route(router, "brrrr")[0] != "IGNORE"  # a sound said slowly, not mashing


def test_asking_for_advice_in_a_skills_words_wants_an_answer(router):
    assert signals_of("My goal is to sleep better, any tips?")["writing_task"] == 1.0
    assert route(router, "My goal is to sleep better, any tips?")[0] == "RESPOND"


@pytest.mark.parametrize(("text", "skill"), [
    ("pls remidn me on friday at 5 to renew the parking permit", "schedule"),  # two letters swapped
    ("remmber that the boiler code is 4471", "memorize"),  # a letter dropped
    ("add rice to my shoppping list", "list"),  # a key pressed twice
    ("set a gaol: swim 1km without stopping", "goal"),
])
def test_a_skills_word_mistyped_is_read_as_meant(router, text, skill):
    assert route(router, text) == ("ACT", skill)


def test_no_typing_slip_the_router_corrects_is_a_word_of_its_own():
    vocabulary = set((minilm_model_dir() / "vocab.txt").read_text(encoding="utf-8").split())
    slips = set(typos._SWAPPED) | set(typos._DROPPED)
    assert slips & vocabulary == set()
    assert [typos.correct(word) for word in ("reminders", "stored", "goat", "remainder", "memories", "shipping")] == [
        "reminders", "stored", "goat", "remainder", "memories", "shipping"]
