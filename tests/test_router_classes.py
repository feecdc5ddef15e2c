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
    ("list everything you keep about me", "introspect"),
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
    slips = set(typos._SWAPPED) | set(typos._DROPPED) | set(typos._LAST_MISSED)
    assert slips & vocabulary == set()
    assert [typos.correct(word) for word in ("reminders", "stored", "goat", "remainder", "memories", "shipping")] == [
        "reminders", "stored", "goat", "remainder", "memories", "shipping"]


# Issue 31's third round: ACKNOWLEDGE is a message that tells something and asks for nothing (news, an update, a plan,
# a passing mood, a fact about the person or their day); distress or a plea for support is RESPOND.
@pytest.mark.parametrize("text", [
    "the plumber finally came and fixed the boiler",  # news
    "Update: we booked the flights to Rome!",  # an update under a label, no command
    "thinking of repainting the hallway green next month",  # a plan
    "bit sleepy this afternoon",  # a passing mood
    "I've got two sisters, both older than me",  # a fact about the person
])
def test_a_message_that_tells_and_asks_nothing_is_acknowledged(router, text):
    signals = signals_of(text)
    assert signals["tells"] == 1.0 and signals["imperative"] == 0.0
    assert route(router, text)[0] == "ACKNOWLEDGE"


@pytest.mark.parametrize(("text", "mode"), [
    ("I feel so alone since the divorce and I can't cope", "RESPOND"),  # distress wants an answer
    ("the plumber finally came, how much should I tip him?", "RESPOND"),  # a question after the news
    ("we booked the flights to Rome, remind me on friday at 9 to pack", "ACT"),  # a command after the news
    ("bit sleepy this afternoon. teach me a quick breathing exercise", "RESPOND"),  # a request in a second clause
])
def test_telling_with_distress_a_question_or_a_request_is_not_acknowledged(router, text, mode):
    assert signals_of(text)["tells"] == 0.0
    assert route(router, text)[0] == mode


@pytest.mark.parametrize("text", [
    "my laptop fan is loud all the time. what could cause that",  # a question word opening a later clause
    "in python, what's the difference between a list and a tuple",  # after a comma
    "wat is the tallest mountain in africa",  # a question word mistyped
])
def test_a_question_without_a_question_mark_is_still_a_question(router, text):
    assert signals_of(text)["question"] == 1.0
    assert route(router, text)[0] == "RESPOND"
    assert signals_of("she asked what's for dinner, so I made soup")["question"] == 0.0  # reported, not asked


@pytest.mark.parametrize("text", ["show me how to fold a fitted sheet", "walk us through making sourdough",
                                  "Quick one: teach me the rules of cribbage."])
def test_a_verb_with_me_as_its_object_is_a_request(router, text):
    assert signals_of(text)["imperative"] == 1.0
    assert route(router, text)[0] == "RESPOND"
    assert signals_of("lucky me, the train was on time")["imperative"] == 0.0


@pytest.mark.parametrize("text", ["I'd like to save something to my notes.", "please schedule something",
                                  "remember something for me",
                                  # Fourth round: a particle after it, and an edit of a bare "the time" or "the list".
                                  "I want to sort something out.", "can you log something for me?",
                                  "Could you change the date?", "rename the list"])
def test_a_placeholder_where_the_content_should_be_needs_asking(router, text):
    assert signals_of(text)["vague_request"] == signals_of(text)["names_nothing"] == 1.0
    assert route(router, text)[0] == "CLARIFY"
    assert signals_of("nice stuff")["vague_request"] == 0.0  # no command before it
    assert signals_of("change the date of my dentist reminder to Friday")["names_nothing"] == 0.0


def test_a_bare_question_word_needs_an_earlier_turn(router):
    assert route(router, "how much?")[0] == "CLARIFY"
    assert route(router, "so what about the colour")[0] == "CLARIFY"
    earlier = [["I'm thinking of buying a second-hand kayak", "Nice! Sit-on-top kayaks are easy to start with."]]
    assert route(router, "how much?", {"working_memory": earlier})[0] == "RESPOND"


def test_the_other_thing_points_back_but_the_other_day_does_not(router):
    assert signals_of("book the other hotel")["unresolved_reference"] == 1.0
    assert route(router, "book the other hotel")[0] == "CLARIFY"
    assert signals_of("I bumped into my old teacher the other day")["has_reference"] == 0.0


@pytest.mark.parametrize("context", [None, {"working_memory": [["remind me tonight at 8 to water the plants",
                                                                "Done: 20:00 tonight, water the plants."]],
                                            "previous_mode": "ACT"}])
def test_asking_which_reminder_was_set_reads_it_and_never_asks_back(router, context):
    text = "What was the reminder I set for this evening?"
    assert signals_of(text)["action_request"] == 0.0
    assert route(router, text, context)[0] in ("ACT", "RESPOND")
    assert route(router, "remind me this evening")[0] == "CLARIFY"  # a reminder to set with nothing to remind of


def test_reading_what_was_told_by_its_topic(router):
    assert route(router, "read me back everything I've said about the garden project") == ("ACT", "recall")


def test_three_neighbouring_home_row_keys_mash_no_word_of_the_vocabulary(router):
    from services.router.mash import is_mash_token

    assert is_mash_token("lkjdsfhsd") and route(router, "asdkjhasd")[0] == "IGNORE"
    home_rows = ("asdfghjkl", "lkjhgfdsa")
    vocabulary = [word for word in (minilm_model_dir() / "vocab.txt").read_text(encoding="utf-8").split()
                  if word.isalpha() and len(word) >= 6
                  and any(word[i : i + 3] in row for row in home_rows for i in range(len(word) - 2))]
    assert [word for word in vocabulary if is_mash_token(word)] == []


def test_the_greetings_there_and_the_thanks_that_point_at_nothing_unsaid(router):
    assert signals_of("hey there, what's the capital of Peru?")["unresolved_reference"] == 0.0
    assert route(router, "hey there, what's the capital of Peru?")[0] == "RESPOND"
    assert route(router, "thanks, will try that tonight")[0] == "ACKNOWLEDGE"  # "that" is the reply just given
    assert route(router, "thanks, can you send that to her?")[0] == "CLARIFY"  # a request still needs its antecedent
    assert route(router, "put it over there")[0] == "CLARIFY"


@pytest.mark.parametrize(("text", "signal", "mode"), [
    ("por favor, tell me how a heat pump works", "tells", "RESPOND"),  # politeness in another language asks
    ("I wonder how bees find their way home", "tells", "RESPOND"),  # a question put as a statement
    ("yeah but where?", "tells", "CLARIFY"),  # a bare question word after a yes
])
def test_asking_in_other_forms_is_no_telling(router, text, signal, mode):
    assert signals_of(text)[signal] == 0.0
    assert route(router, text)[0] == mode
    assert signals_of("I wonder, honestly, it was a lovely evening")["tells"] == 1.0  # no question word after it


def test_feeling_low_is_distress_and_a_bit_tired_is_a_mood():
    assert signals_of("I've been feeling so low and empty for months")["distress"] == 1.0
    assert signals_of("bit tired after the hike, nice day though")["tells"] == 1.0


@pytest.mark.parametrize(("text", "skill"), [
    ("could you make sure I don't forget to post the birthday card on Thursday", "schedule"),
    ("tell me at 6 tomorrow to put the bins out", "schedule"),  # a time right after "tell me"
    ("block out Wednesday 9 to 11 for the tax return", "schedule"),
    ("I'd be grateful if you noted that my blood type is O negative", "memorize"),
    ("I'm aiming to stretch every evening, help me stay on track", "goal"),
    ("when is my next physio appointment?", "schedule"),  # a booked thing is read from the schedule
])
def test_commands_in_indirect_words(router, text, skill):
    assert route(router, text) == ("ACT", skill)


@pytest.mark.parametrize(("text", "mode"), [
    ("tell me about the history of tea", "RESPOND"),  # no time after "tell me": an explanation
    ("add a task to my list", "CLARIFY"),  # a placeholder object
    ("pros and cons of heat pumps", "RESPOND"),  # a topic named as the thing wanted
    ("I need a present idea for my nephew who likes trains", "RESPOND"),
    ("Same place as last time?", "CLARIFY"),
])
def test_what_the_indirect_words_are_not(router, text, mode):
    assert route(router, text)[0] == mode


# Issue 31, fourth round (the settled definitions): a question about the person's past wants an answer in words
# (RESPOND); a command to show stored items reads them (ACT/recall).
@pytest.mark.parametrize("text", [
    "what have you got stored on me?",  # once ACT/introspect, now asked
    "is there anything in your memory about my landlord?",
    "what was the café I mentioned last week?",
    "what do you know about my car insurance",
    "what have you figured out about my habits?",
    "haven't I told you where my spare key is? where was it",
    "whats the bakery i said was the best in town",
    "remind me what my cousin's postcode is",  # the ask's "remind" names no stored reminder
    "When did I say the boiler service was booked?",  # about a booking, but what was *said* about it
])
def test_a_question_about_the_persons_past_is_answered_in_words(router, text):
    assert signals_of(text)["past_question"] == 1.0
    assert route(router, text)[0] == "RESPOND"


@pytest.mark.parametrize(("text", "mode"), [
    ("what's my next reminder?", "ACT"),  # a skill's own store is read, not told about
    ("which goals have I set?", "ACT"),
    ("did I ask you to remind me about anything on Sunday?", "ACT"),
    ("summarise what you know about me", "ACT"),  # a command, not a question
    ("look up what I told you about the loft insulation", "ACT"),
])
def test_what_a_question_about_the_past_is_not(router, text, mode):
    assert signals_of(text)["past_question"] == 0.0
    assert route(router, text)[0] == mode


@pytest.mark.parametrize("text", [
    "show me my reminders", "list my goals please", "display the reminders for next week",
    "give me a list of my alarms", "bring up what I saved about the bathroom tiles",
    "pull up the notes you kept on the car", "List everything I've asked you to remember.",
])
def test_a_command_to_show_stored_items_reads_them(router, text):
    signals = signals_of(text)
    assert signals["shows_stored"] == 1.0 and signals["action_request"] == 0.0  # nothing to set, nothing missing
    assert route(router, text) == ("ACT", "recall")


@pytest.mark.parametrize(("text", "mode"), [
    ("show me how to set an alarm on android", "RESPOND"),  # nothing stored is shown
    ("list the goals of the Paris agreement", "RESPOND"),
    ("read me my camping list", "ACT"),  # a list read by name is the list skill's own
])
def test_what_a_command_to_show_stored_items_is_not(router, text, mode):
    assert signals_of(text)["shows_stored"] == 0.0
    assert route(router, text)[0] == mode


def test_a_prompt_asked_for_at_a_time_is_scheduled(router):
    assert route(router, "Every Friday at 5pm, ask me what went well this week.") == ("ACT", "schedule")
    assert route(router, "at 10 tonight check in with me about the essay") == ("ACT", "schedule")
    # Not a prompt: someone else will ask, and no time means no schedule.
    assert signals_of("My manager will ask me about the budget on Monday.")["skill_schedule"] == 0.0
    assert signals_of("ask me anything you like")["skill_schedule"] == 0.0


@pytest.mark.parametrize("text", ["Put the items on the list as agreed.", "same as usual on the grocery list",
                                  "do it like before"])
def test_what_was_agreed_or_usual_needs_an_earlier_turn(router, text):
    assert signals_of(text)["unresolved_reference"] == 1.0
    assert route(router, text)[0] == "CLARIFY"
    assert route(router, "As discussed with my sister, we'll split the bill.")[0] == "ACKNOWLEDGE"


@pytest.mark.parametrize(("text", "mode"), [
    ("I'd love your take on whether a standing desk is worth it.", "RESPOND"),  # the assistant's view is asked
    ("I took your advice and the plant is thriving!", "ACKNOWLEDGE"),  # told, not asked
    ("Guess what, the car passed its MOT!", "ACKNOWLEDGE"),  # an opener announcing news commands nothing
    ("whr do penguins live", "RESPOND"),  # a question word typed without its vowels
])
def test_asking_for_a_view_and_announcing_news(router, text, mode):
    assert route(router, text)[0] == mode



def test_nothing_but_times_answers_a_question_no_earlier_turn_asked(router):
    for text in ("Thursday or Friday?", "the 3rd or the 4th"):
        assert signals_of(text)["context_dependent"] == 1.0
        assert route(router, text)[0] == "CLARIFY"
    assert signals_of("what's on tomorrow?")["context_dependent"] == 0.0  # a question word asks about the day
    asked = [["Remind me to book the MOT", "When should I remind you?"]]
    assert signals_of("Thursday at 10", working_memory=asked)["unresolved_reference"] == 0.0  # the answer it wanted


def test_engram_route_says_a_question_about_the_past_runs_nothing(router):
    text = "what did I say my nephew's shoe size was?"
    explained = skill_explanation(text, router.route(context_from_record(text)).signals)
    assert explained == "recall (skill_recall); asks about the past (past_question): answered in words, nothing to run"
    shown = "show my goals"
    assert skill_explanation(shown, router.route(context_from_record(shown)).signals).endswith("reads what is stored")
