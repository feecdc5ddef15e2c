"""Messages the people of `bench.answers` sent that the router read wrongly, in wordings of this file's own.

None is a line of a labelled set or of the bench's scenarios (tests/test_router_phrasings.py's check covers the
phrasing files; these were written apart from both). Each is routed twice, by the shipped weights on text signals
alone and by the real router with the default embedding model.
"""

from __future__ import annotations

import pytest

from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# "Remind me, what …" about what the person told is a question to answer from memory, not a reminder to set
# (it went to CLARIFY as a reminder with no time, and the reply asked when).
ASKED_FROM_MEMORY = [
    "Remind me please, who is the vet I take the dog to?",
    "remind me again, what is my landlord called",
    "remind me quickly which gym I joined in the end",
]


@pytest.mark.parametrize("text", ASKED_FROM_MEMORY)
def test_remind_me_then_a_question_about_what_was_told_is_answered_not_scheduled(routers, text):  # noqa: F811
    assert {mode for mode, _ in routes(routers, text)} <= {"RESPOND", "ACT"}
    assert ("ACT", "schedule") not in routes(routers, text)


def test_remind_me_what_with_a_time_is_still_a_reminder(routers):  # noqa: F811
    assert routes(routers, "remind me what I need for the dentist at 8 tomorrow") != {("RESPOND", None)}


# An idea or recipe asked for with a few words between ("need a quick lunch idea", "need an easy vegan curry
# recipe. go.") wants a written answer; it was read as news told (ACKNOWLEDGE) and answered with a pleasantry.
IDEAS_ASKED = [
    "need a cheap weeknight dinner idea, wat can i do with rice",
    "Need an easy vegan curry recipe for tonight. Go.",
    "looking for some quick packed lunch ideas for the kids",
]


@pytest.mark.parametrize("text", IDEAS_ASKED)
def test_an_idea_or_recipe_asked_for_wants_an_answer(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


def test_buying_recipe_books_is_no_request_for_a_recipe(routers):  # noqa: F811
    assert ("RESPOND", None) not in routes(routers, "I need to buy some recipe books for my nan")


# A list read by its name without "my" or "the", as a learner asks it: the list itself, not a general question.
@pytest.mark.parametrize("text", ["What is on camping list?", "What is in shopping list please?"])
def test_a_list_asked_for_by_its_bare_name_is_read_from_the_list(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


def test_a_list_of_the_world_stays_a_question(routers):  # noqa: F811
    assert ("ACT", "list") not in routes(routers, "What is on a typical Christmas dinner list in Poland?")


# A list asked for by what it is for, with "the": "wat we got on the list for the beach so far" went to RESPOND and the
# model read back three of five items.
@pytest.mark.parametrize("text", ["wat have we got on the list for the campsite so far",
                                  "What have I put on the list for the bake sale?"])
def test_a_list_asked_for_by_what_it_is_for_is_read_from_the_list(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


# A formal request opened by gratitude: "I would be grateful if you would create a garden list with …" was read as
# news told (ACKNOWLEDGE), the reply wrote a list in words and nothing was stored.
@pytest.mark.parametrize("text", ["I would be grateful if you would create a sewing list with thread, pins and chalk.",
                                  "I'd be obliged if you'd start a list for the fete with bunting and raffle tickets."])
def test_a_request_opened_by_gratitude_is_done(routers, text):  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


# A question opened by "yo" about a reminder set before ("yo wat was i sposed to do sat, u had a reminder for me")
# was read as a request to change the reminder, and the planner offered to cancel it.
def test_a_question_after_yo_is_a_question(routers):  # noqa: F811
    from services.router.textview import interrogative_signals, text_view

    assert interrogative_signals(text_view("yo wat was i meant to do on sunday, u set a reminder"))["question"] == 1.0


# Terse questions with no question mark: after "wait", with "these days" (a time, no pointer at an earlier turn), with
# a noun between the question word and its verb, or the question word alone at the end. Each was read as news told or
# as a reference to something never said, and the reply was a pleasantry or a suggestion.
@pytest.mark.parametrize("text", ["wait whats my cats name again lol", "what car do i drive these days",
                                  "Ferry to Skye. What time does it leave.", "Need to get to Lisbon by Friday. How."])
def test_a_terse_question_without_a_question_mark_wants_an_answer(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


def test_what_the_assistant_was_to_prompt_me_about_reads_the_reminders(routers):  # noqa: F811
    assert routes(routers, "What was it that you were to prompt me about tomorrow evening?") == {("ACT", "schedule")}
