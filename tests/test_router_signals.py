"""Router signals from the text alone: features, interrogatives, phatic patterns, skills, slots, references."""

from __future__ import annotations

import pytest

from services.router import mash, references
from services.router import signals as rs
from services.router import textview as tv
from services.router.signals import RoutingContext


def signals_of(text: str, **context) -> dict[str, float]:
    return rs.collect_signals(RoutingContext(text=text, **context))


# --- text features ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "flag"),
    [("...", "punct_only"), ("?!", "punct_only"), ("👍", "emoji_only"), (":)", "emoji_only"), ("  ", "empty")],
)
def test_text_feature_flags(text, flag):
    features = tv.text_features(rs.text_view(text))
    assert features[flag] == 1.0
    assert sum(features[name] for name in ("punct_only", "emoji_only", "empty")) == 1.0


def test_text_feature_counts_and_sentences():
    features = tv.text_features(rs.text_view("One thing. Another thing! Why?"))
    assert features["word_count"] == 5.0
    assert features["multi_sentence"] == 1.0
    assert features["short"] == 0.0
    assert tv.text_features(rs.text_view("ok then"))["short"] == 1.0
    assert tv.text_features(rs.text_view("awesome 😄"))["emoji_only"] == 0.0


@pytest.mark.parametrize(
    "token", ["asdfghjkl", "qwerty", "jjjjjjj", "dfgdfgdfg", "tyutyu", "fjdkslaf", "xzcvb", "lkj", "qqq", "wqeqwe"]
)
def test_mash_tokens(token):
    assert mash.is_mash_token(token)


@pytest.mark.parametrize(
    "token",
    ["hahaha", "hmmm", "strengths", "rhythm", "dentist", "salads", "thnx", "ttyl", "css", "nooooo", "yessss",
     "heyyy", "liberty", "property", "tomorrow", "lol"],
)
def test_words_and_laughs_are_not_mash(token):
    assert not mash.is_mash_token(token)


def test_keyboard_mash_is_the_share_of_mashed_words():
    assert tv.text_features(rs.text_view("asdf jkl"))["keyboard_mash"] == 1.0
    assert tv.text_features(rs.text_view("hello asdfgh"))["keyboard_mash"] == 0.5
    assert tv.text_features(rs.text_view("call the dentist"))["keyboard_mash"] == 0.0


def test_long_message_is_analysed_by_head_and_tail_but_counted_in_full():
    text = "Here is my essay. " + "Lorem ipsum dolor sit amet. " * 400 + "Remind me tomorrow at 9 to submit it."
    view = rs.text_view(text)
    assert len(view.raw) < 700 and view.full_chars == len(text) and view.full_words == len(text.split())
    signals = signals_of(text)
    assert signals["word_count"] == len(text.split()) and signals["long"] == 1.0
    assert signals["skill_remind"] == 1.0 and signals["has_time"] == 1.0


# --- interrogatives and phatic patterns ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "wh", "aux", "question"),
    [
        ("What is a monad", 1, 0, 1),
        ("so how does it work", 1, 0, 1),
        ("Do you remember my sister?", 0, 1, 1),
        ("can you explain recursion", 0, 1, 1),
        ("Do the same as last time.", 0, 0, 0),
        ("It rains a lot?", 0, 0, 1),
        ("Write a haiku.", 0, 0, 0),
    ],
)
def test_interrogatives(text, wh, aux, question):
    signals = tv.interrogative_signals(rs.text_view(text))
    assert (signals["wh_question"], signals["aux_question"], signals["question"]) == (wh, aux, question)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Good morning!", {"greeting", "phatic_only"}),
        ("thank you so much", {"thanks", "phatic_only"}),
        ("bye, see you tomorrow", {"farewell", "phatic_only"}),
        ("Thanks a lot! That was really helpful.", {"thanks", "reaction", "phatic_only"}),
        ("haha that's funny", {"reaction", "phatic_only"}),
        ("Hi! Can you explain how black holes form?", {"greeting"}),
        ("Thanks! Also, remind me to buy milk tomorrow.", {"thanks"}),
        ("How do vaccines work?", set()),
    ],
)
def test_phatic_patterns(text, expected):
    signals = rs.phatic_signals(rs.text_view(text))
    assert {name for name, value in signals.items() if value} == expected


# --- skills, slots, imperatives and references -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "skills"),
    [
        ("remind me tomorrow at 9 to call the dentist", {"remind"}),
        ("Schedule a call with Tom next Monday", {"schedule"}),
        ("Add milk to my shopping list", {"list"}),
        ("What's on my shopping list?", {"list"}),
        ("Please remember I'm allergic to penicillin.", {"remember"}),
        ("What did I tell you about my trip?", {"recall"}),
        ("what do you know about me?", {"recall", "introspect"}),
        ("I want to set a goal to run a 5k", {"goal"}),
        ("Give me a list of 5 books", set()),
        ("What are good goals for a beginner runner?", set()),
        ("Do you remember when the Berlin wall fell?", {"recall"}),
        ("Forget that I live in Paris", {"forget"}),
        ("delete everything you know about my job", {"forget"}),
        ("Erase what I told you about my diagnosis.", {"forget", "recall"}),
        ("Can you forget things?", set()),  # a question about the assistant, not a request
        ("Ah forget it, never mind.", set()),
        ("Don't forget my keys tomorrow", {"remember"}),
        ("cancel my dentist reminder", {"manage", "remind"}),
        ("stop reminding me about the gym", {"manage"}),
        ("what reminders do I have?", {"manage", "remind"}),
        ("uncheck milk", {"manage"}),
        ("Delete my shopping list", {"list", "manage"}),
        ("Create a new list called camping gear.", {"list", "manage"}),  # names the list it creates (issue 31)
        ("mark my marathon goal as done", {"goal", "manage"}),
        ("What goals am I working on right now?", {"goal"}),
        ("remind me to cancel the meeting", {"remind"}),  # the edit is the reminder's task, not a request
        ("How can I remove duplicates from a list in Python?", set()),
        ("Is it possible to uncheck a checkbox with JavaScript?", set()),
        ("How do I delete a file in Linux?", set()),
    ],
)
def test_skill_detection(text, skills):
    signals = rs.skill_signals(rs.text_view(text))
    assert {name.removeprefix("skill_") for name, value in signals.items() if value and name != "skill_any"} == skills
    assert signals["skill_any"] == (1.0 if skills else 0.0)


def test_remind_me_what_is_an_explanation_not_a_reminder():
    signals = signals_of("Remind me what a monad is.")
    assert signals["remind_explain"] == 1.0
    assert signals["action_request"] == 0.0


@pytest.mark.parametrize(
    ("text", "action", "missing"),
    [
        ("Remind me", 1, 1),
        ("remind me to call mom", 1, 1),  # no time
        ("Remind me at 5.", 1, 1),  # no task
        ("remind me tomorrow at 9 to call the dentist", 1, 0),
        ("Set an alarm for 6am.", 1, 0),
        ("Schedule it.", 1, 1),
        ("Schedule a meeting with Sarah.", 1, 1),
        ("Add milk to my shopping list", 1, 0),
        ("Add to my shopping list", 1, 1),
        ("Remember that", 1, 1),
        ("My locker code is 4312, remember that.", 1, 0),
        ("What's on my shopping list?", 0, 0),
        ("How am I doing on my goals?", 0, 0),
        ("What's my next reminder?", 0, 0),
        ("what reminders do I have?", 0, 0),
        # Edits and forgetting name *which* item; they never need a new time.
        ("cancel my dentist reminder", 1, 0),
        ("Delete the reminder.", 1, 1),
        ("move my 9am reminder to 10", 1, 0),
        ("Delete my shopping list", 1, 0),  # the list's name is the item
        ("Delete my list", 1, 1),
        ("uncheck milk", 1, 0),
        ("Create a new list.", 1, 1),
        ("Change my goal.", 1, 1),
        ("Update my savings goal to 300 a month.", 1, 0),
        ("Forget that I live in Paris", 1, 0),
        ("Erase what I told you about my diagnosis.", 1, 0),
    ],
)
def test_slot_completeness(text, action, missing):
    signals = signals_of(text)
    assert (signals["action_request"], signals["slot_missing"]) == (action, missing)
    assert signals["slots_complete"] == (1.0 if action and not missing else 0.0)


def test_slot_filled_from_working_memory_when_reference_resolves():
    memory = [("My dentist appointment is on Friday at 10am", "Good luck!")]
    assert signals_of("Schedule it.")["slot_missing"] == 1.0
    signals = signals_of("Schedule it.", working_memory=memory)
    assert signals["resolved_reference"] == 1.0
    assert signals["slots_complete"] == 1.0


@pytest.mark.parametrize(
    ("text", "imperative", "vague"),
    [("Fix it.", 1, 1), ("Write a haiku about autumn", 1, 0), ("I need help with something.", 0, 1),
     ("Can you help me?", 1, 1), ("How do magnets work?", 0, 0)],
)
def test_imperatives(text, imperative, vague):
    signals = rs.imperative_signals(rs.text_view(text))
    assert (signals["imperative"], signals["vague_request"]) == (imperative, vague)


def test_pronoun_without_antecedent_is_unresolved():
    signals = signals_of("Send it to her.")
    assert signals["has_reference"] == 1.0
    assert signals["unresolved_reference"] == 1.0


def test_pronoun_with_antecedent_in_working_memory_resolves():
    memory = [("Draft a text to my sister Maya", "Here's a draft: 'Hey Maya, running late!'")]
    signals = signals_of("Send it to her.", working_memory=memory)
    assert signals["unresolved_reference"] == 0.0
    assert signals["resolved_reference"] == 1.0


def test_person_pronoun_needs_a_person_antecedent():
    memory = [("what's the boiling point of water?", "water boils at 100 degrees celsius at sea level.")]
    assert references.has_antecedent(False, memory)
    assert not references.has_antecedent(True, memory)
    assert signals_of("Tell her I said yes.", working_memory=memory)["unresolved_reference"] == 1.0


def test_long_message_carries_its_own_antecedent():
    signals = signals_of("I have a new phone but it keeps crashing when I open the camera, how do I fix it?")
    assert signals["has_reference"] == 1.0
    assert signals["unresolved_reference"] == 0.0


def test_forget_what_i_told_you_points_at_the_conversation():
    assert signals_of("Forget what I told you.")["unresolved_reference"] == 1.0
    memory = [("My cousin is pregnant but it's a secret", "Lovely news, I'll keep it to myself.")]
    signals = signals_of("Forget what I told you.", working_memory=memory)
    assert signals["resolved_reference"] == 1.0 and signals["slots_complete"] == 1.0
    assert signals_of("forget what I told you about my ex")["has_reference"] == 0.0


def test_editing_verb_on_a_resolved_pronoun_acts_on_the_previous_skill():
    goal_turn = [("How am I doing on my goal to read 12 books?", "You've read 11 of 12.")]
    signals = signals_of("Mark it as done.", working_memory=goal_turn)
    assert signals["skill_manage"] == 1.0 and signals["skill_any"] == 1.0 and signals["slots_complete"] == 1.0
    poem_turn = [("Write a poem about the sea", "The grey sea rolls in over the stones.")]
    assert signals_of("Mark it as done.", working_memory=poem_turn)["skill_any"] == 0.0
    assert signals_of("Mark it as done.")["skill_any"] == 0.0 and signals_of("Mark it as done.")["unresolved_reference"]
    assert not rs.edits_previous_item(rs.text_view("Tell me more about it."), goal_turn)


def test_time_expression_is_not_a_reference():
    signals = signals_of("Which reminders are coming up this week?")
    assert signals["has_reference"] == 0.0 and signals["unresolved_reference"] == 0.0


@pytest.mark.parametrize("text", ["Cool, thanks for removing it.", "perfect, that's gone then 👍", "ugh, forget it"])
def test_closing_remarks_after_an_edit_are_phatic(text):
    assert rs.phatic_signals(rs.text_view(text))["phatic_only"] == 1.0


def test_context_dependent_phrases():
    assert signals_of("Tell me more.")["unresolved_reference"] == 1.0
    memory = [("What's the history of the Eiffel Tower?", "It was built for the 1889 World's Fair.")]
    signals = signals_of("Tell me more.", working_memory=memory)
    assert signals["context_dependent"] == 1.0 and signals["resolved_reference"] == 1.0
    assert signals_of("Book the usual place for us.")["context_dependent"] == 1.0


def test_phatic_pointer_is_not_an_unresolved_reference():
    assert signals_of("that's great")["unresolved_reference"] == 0.0
