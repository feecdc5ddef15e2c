"""Issue 31's twelfth round: the kinds of message routing_tuning13's looked-at two thirds found, and a known miss (a
long day told with times in it).

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). Each family is routed twice: by the shipped weights on text signals alone and by the real router with
the default embedding model (``routes``); each must agree on the mode and, for ACT, on the skill.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes, signals_of  # noqa: F401 (a fixture)

# A long day told as it went, framed as a day or a shift up front or winding down at its end, with times in it: told.
DAYS_TOLD = [
    "Long shift at the depot. Loaded the first lorry at 5:40, the forklift battery went flat at nine, a driver turned "
    "up without his paperwork and the canteen ran out of pies by twelve. Home now with my feet up.",
    "Up at half five for the milking, the vet came at 8 for the lame heifer, then the tractor threw a belt and I spent "
    "the afternoon in the muck. Bath now and an early night.",
    "Busy day at the print shop: four hundred wedding invitations, a jammed guillotine at 2pm and a customer who "
    "wanted everything in a slightly different green. Kettle on now.",
]


@pytest.mark.parametrize("text", DAYS_TOLD)
def test_a_long_day_told_is_acknowledged(routers, text):  # noqa: F811
    assert signals_of(text)["day_told"] == 1.0
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# A guard (it passed before too): a long day ending in a plea is distress, not a day told.
def test_a_long_shift_ending_in_a_plea_is_answered(routers):  # noqa: F811
    text = ("Long shift on the ward, started at seven, two cardiac arrests before lunch and a family screaming at me "
            "at four. I can't cope any more and I don't know what to do.")
    assert signals_of(text)["day_told"] == 0.0
    assert routes(routers, text) == {("RESPOND", None)}


# A dot between digits is a time, not the end of a sentence: the reminder keeps its text.
DOTTED_TIMES = [
    "Set me a reminder at 6.45 tomorrow morning to defrost the lamb.",
    "The gas man is coming on Friday. Can you set a reminder at 8.15 on Friday to move the car?",
]


@pytest.mark.parametrize("text", DOTTED_TIMES)
def test_a_reminder_at_a_dotted_time_schedules(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "schedule")}


# "What a ..." exclaims: a reminder about something never said, after it, still needs asking.
def test_an_exclamation_then_a_reminder_about_a_pointer_needs_asking(routers):  # noqa: F811
    text = ("What a week on the allotment. The slugs got the lettuces and the shed door blew off. Anyway, remind me "
            "about what my neighbour wanted, at the time we settled on?")
    assert routes(routers, text) == {("CLARIFY", None)}


# "Remind me which ..." and "remind me of the difference between ..." ask for an explanation.
REMIND_TO_EXPLAIN = [
    "Could you remind me of the difference between affect and effect?",
    "Remind me which way the clocks go in October.",
]


@pytest.mark.parametrize("text", REMIND_TO_EXPLAIN)
def test_remind_me_which_or_of_the_difference_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# Suggesting or recommending reminders or goals writes an answer; nothing is stored.
SUGGESTED = [
    "Suggest some reminders a first-time allotment holder should set up in spring.",
    "Recommend some reminders worth setting for a new puppy owner.",
]


@pytest.mark.parametrize("text", SUGGESTED)
def test_a_request_to_suggest_reminders_or_goals_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# One or two keys held down or tapped in turn, with a digit among them and no word of letters: no message.
HELD_DIGIT_KEYS = ["9999999999", "1l1l1l1l1l", "5t5t5t5t"]


@pytest.mark.parametrize("text", HELD_DIGIT_KEYS)
def test_keys_held_with_digits_are_ignored(routers, text):  # noqa: F811
    assert routes(routers, text) == {("IGNORE", None)}


# A guard (it passed before too): a year or a round number alone is no mash.
@pytest.mark.parametrize("text", ["2031", "250000"])
def test_a_number_alone_is_not_mashing(routers, text):  # noqa: F811
    assert signals_of(text)["keyboard_mash"] == 0.0


# A list told about, then a question asking advice on one's own deed ("should I ..."): the list is told, answered.
def test_a_list_told_then_should_i_is_answered(routers):  # noqa: F811
    text = 'My grandad\'s shopping list was still in his wallet, it just says "buy stamps". Should I keep it?'
    assert routes(routers, text) == {("RESPOND", None)}


# "I just write ..." tells a habit: no writing task.
def test_i_just_write_tells_a_habit(routers):  # noqa: F811
    text = "I never bother with reminder apps, I just write everything on the back of an envelope."
    assert signals_of(text)["writing_task"] == 0.0
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


# Pointers never named here: what someone said, by name; a goal made what someone said; a deed done "for X what you
# did for Y"; data kept elsewhere, named by where it is ("the readings from the gas meter").
NEVER_NAMED = [
    "Remind me about what Priya said, at 9 tomorrow.",
    "Set my goal to what the coach suggested please",
    "Please do for my brother what you did for me.",
    "Save the readings from the gas meter to my notes.",
    "can you add the dates from the school newsletter to my notes?",
]


@pytest.mark.parametrize("text", NEVER_NAMED)
def test_a_pointer_never_named_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# Guards (they passed before too): the same commands with what they act on given act.
NAMED_HERE = [
    ("Save the readings from the gas meter: 04512 day and 11873 night", "memorize"),
    ("add the oat milk from the corner shop to my shopping list", "list"),
    ("Remind me at 9 tomorrow to ring Priya about the quote.", "schedule"),
]


@pytest.mark.parametrize(("text", "skill"), NAMED_HERE)
def test_the_same_command_with_what_it_acts_on_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Commands that carry their content: a goal put in with what it is, a goal named then marked done, a placeholder filled
# by the next sentence, what was told read out (texted), a nudge asked for with a time and a text.
COMMANDS_WITH_CONTENT = [
    ("Pop a goal in for me: swim 40 lengths every Saturday.", "goal"),
    ("Goal reached: the 10k in under an hour at last! Mark it as complete.", "goal"),
    ("Could you set up a goal for me? I want to read twelve novels this year.", "goal"),
    ("read out everything ive told u about the caravan", "recall"),
    ("Give me a nudge at 7pm tonight to water the tomatoes.", "schedule"),
]


@pytest.mark.parametrize(("text", "skill"), COMMANDS_WITH_CONTENT)
def test_a_command_with_its_content_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Something unnamed done about a stored thing, and a reminder with a day and its half hour but no text: asking.
UNDERSPECIFIED = [
    "Can you do something about my goals, they are all over the place.",
    "Reminder for Friday half 4 pls",
]


@pytest.mark.parametrize("text", UNDERSPECIFIED)
def test_an_underspecified_command_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): the day and its half hour with a text is a reminder.
def test_a_reminder_on_a_day_at_half_past_schedules(routers):  # noqa: F811
    assert routes(routers, "Remind me on Friday at half 4 to collect the suit") == {("ACT", "schedule")}


# More of the set's own rules, in messages of this file: "run through" shows what is stored; a goal for a time stated
# and handed over to be tracked; a reminder "bout it" (texted); "both" picks between options never offered here.
MORE_COMMANDS_WITH_CONTENT = [
    ("run through my goals for this month", "recall"),
    ("can you run through my saved notes about the garden", "recall"),
    ("Goal for next year is to run a half marathon, please keep track of it", "goal"),
]


@pytest.mark.parametrize(("text", "skill"), MORE_COMMANDS_WITH_CONTENT)
def test_running_through_what_is_stored_or_a_goal_to_track_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


BARE_POINTERS = ["can u remind me bout it tomorrow at 10", "Both of those please.", "both, thanks"]


@pytest.mark.parametrize("text", BARE_POINTERS)
def test_a_reminder_bout_it_or_a_bare_both_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# What a list, a reminder or a goal is for asks for an opinion, not for one to be made.
WHAT_IS_THE_POINT = [
    "what's the point of reminders on my laptop if I ignore them all?",
    "What is even the point of setting reminders on my watch when I always snooze them?",
    "whats the point of my goals if work keeps changing?",
]


@pytest.mark.parametrize("text", WHAT_IS_THE_POINT)
def test_what_the_point_of_a_skill_is_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


# A learner's "my list of shopping" is the shopping list; a day picked in each month is a time, not "the last" of
# something said before.
LEARNERS_AND_MONTHLY = [
    ("Please to put in my list of shopping: eggs of duck, yoghurt and mint.", "list"),
    ("remind me the last Friday of every month at 3pm to send the invoices", "schedule"),
    ("remind me the last weekday of every month to submit my timesheet", "schedule"),
]


@pytest.mark.parametrize(("text", "skill"), LEARNERS_AND_MONTHLY)
def test_a_learners_list_or_a_monthly_day_acts(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


# Only a pointer before a reminder with a time gives it no text: "that thing" was never said.
POINTER_THEN_REMINDER = ["u kno that thing, remind me at 9pm", "you know the one, remind me tomorrow at 6"]


@pytest.mark.parametrize("text", POINTER_THEN_REMINDER)
def test_a_pointer_then_a_timed_reminder_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# A guard (it passed before too): words before the reminder that say what it is about give it its text.
def test_words_before_a_timed_reminder_give_its_text(routers):  # noqa: F811
    assert routes(routers, "The skip lorry comes at eight tomorrow. Remind me at 7") == {("ACT", "schedule")}
