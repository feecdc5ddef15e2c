"""The miss families of issue 31's eighth round, each with what tells it apart and a counter-example.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too): each family is a kind of message the router used to send to the wrong mode (found in the looked-at
two thirds of routing_tuning8.jsonl), and each is routed twice: by the shipped weights on text signals alone (what
routing falls back to) and by the real router with the default embedding model (what a deployment routes with).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from services.embeddings import for_requests, load_embedder
from services.router.mode_router import ModeRouter, context_from_record
from services.router.skills import skill_hint
from tests import test_router_classes as classes

ROOT = Path(__file__).resolve().parents[1]
signals_of = classes.signals_of


@pytest.fixture(scope="module")
def routers(tmp_path_factory) -> list[ModeRouter]:
    """The shipped base weights, once on text signals alone and once with the default embedder."""
    target = tmp_path_factory.mktemp("configs")
    for name in ("router.toml", "router_exemplars.toml"):
        shutil.copy(ROOT / "configs" / name, target / name)
    return [ModeRouter(target), ModeRouter(target, for_requests(load_embedder("auto")))]


def routes(routers: list[ModeRouter], text: str, context: dict | None = None) -> set[tuple[str, str | None]]:
    """The (mode, skill) each router gives ``text`` (after ``context``'s turns, when given): one element when both
    agree."""
    got = set()
    for router in routers:
        embedding = router.embedder.embed(text) if router.embedder is not None else None
        decision = router.route(context_from_record(text, context, embedding))
        got.add((decision.mode, skill_hint(text, decision.signals) if decision.mode == "ACT" else None))
    return got


# A deed (send, move, book, store, edit, pass word on) that no skill reads names nothing the assistant could act on.
UNNAMED_DEEDS = [
    "Bump everything after lunch back by thirty minutes",
    "Forward the one with the photos in",
    "move my thing on Thursday to the afternoon",
    "Mia's coming as well so add her stuff",
    "Actually make it four not three",
    "jot those figures down for me",
    "Tell my landlord",
    "let them know we're running late",
]


@pytest.mark.parametrize("text", UNNAMED_DEEDS)
def test_a_deed_no_skill_reads_needs_asking(routers, text):
    assert signals_of(text)["deed_unnamed"] == 1.0
    assert routes(routers, text) == {("CLARIFY", None)}


@pytest.mark.parametrize("text", ["Could you handle the parking permit thing", "Can you bump the rest back a week?"])
def test_a_deed_asked_as_a_question_needs_asking(routers, text):
    # Asked as a question it is a near tie on text signals alone (a question leans RESPOND); the real router asks.
    signals_only, embedded = routers
    assert signals_of(text)["deed_unnamed"] == 1.0
    assert routes([embedded], text) == {("CLARIFY", None)}


@pytest.mark.parametrize(("text", "mode"), [
    ("Send me a limerick about a forgetful goat", ("RESPOND", None)),  # for the person, something new: an answer
    ("Tell a story about a brave snail", ("RESPOND", None)),
    ("Email etiquette for new managers?", ("RESPOND", None)),  # a topic typed as a noun phrase
    ("Add up 128 and 256", ("RESPOND", None)),
    ("Move my dentist reminder to 4pm", ("ACT", "schedule")),  # a skill reads it
    ("Lay out a plan to get me from the couch to a 10k", ("RESPOND", None)),  # writing a plan
])
def test_the_same_verbs_asking_for_an_answer_or_read_by_a_skill(routers, text, mode):
    assert signals_of(text)["deed_unnamed"] == 0.0
    assert routes(routers, text) == {mode}


@pytest.mark.parametrize("text", ["Can you organise something for Gran's 90th?",
                                  "I need you to arrange something for the team over Easter"])
def test_a_placeholder_for_someone_names_nothing(routers, text):
    assert signals_of(text)["names_nothing"] == 1.0
    assert routes(routers, text) == {("CLARIFY", None)}


def test_a_placeholder_an_answer_fills_is_no_deed(routers):
    text = "Can you suggest something for Gran's 90th?"
    assert signals_of(text)["names_nothing"] == 0.0
    assert routes(routers, text) == {("RESPOND", None)}


@pytest.mark.parametrize("text", ["Book her in for Wednesday", "Sign him up for Tuesday"])
def test_a_day_or_a_month_names_nobody_a_pronoun_could_be(routers, text):
    assert signals_of(text)["unresolved_reference"] == 1.0
    assert routes(routers, text) == {("CLARIFY", None)}


@pytest.mark.parametrize("text", ["add whatever I forwarded you to the shopping list",
                                  "save the link I pasted", "file the above under my work notes",
                                  "pop the things from the receipt on my list"])
def test_what_was_handed_over_where_this_conversation_cannot_see_needs_asking(routers, text):
    assert routes(routers, text) == {("CLARIFY", None)}


@pytest.mark.parametrize(("text", "mode"), [
    ("mark the tent pegs as packed on the camping list", ("ACT", "list")),
    ("For the bake sale list add flapjacks, brownies and lemon drizzle", ("ACT", "list")),
    ("retrieve my reminders for next week", ("ACT", "recall")),
    ("show me what's in my reminders for Friday", ("ACT", "recall")),
])
def test_list_items_marked_or_named_after_their_list_and_stored_items_retrieved(routers, text, mode):
    assert routes(routers, text) == {mode}


@pytest.mark.parametrize("text", ["My husband writes our shopping list on the back of his hand",
                                  "I set myself a goal of 10,000 steps and hit it every day this week",
                                  "I've already set a reminder on my phone for the MOT",
                                  "Our to-do list has been stuck to the fridge for months"])
def test_a_skill_told_of_in_a_statement_asks_for_nothing(routers, text):
    assert signals_of(text)["skill_told"] == 1.0
    assert routes(routers, text) == {("ACKNOWLEDGE", None)}


@pytest.mark.parametrize(("text", "mode"), [
    ("I bought the eggs, tick them off my shopping list", ("ACT", "list")),  # a clause commands
    ("I'd like to set a goal of 10,000 steps a day", ("ACT", "goal")),  # a wish opens it
    ("My goal for June is to swim 20 lengths without stopping", ("ACT", "goal")),  # a goal stated
])
def test_the_person_asking_in_the_first_person_is_no_statement(routers, text, mode):
    assert signals_of(text)["skill_told"] == 0.0
    assert routes(routers, text) == {mode}
