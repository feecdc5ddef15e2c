"""Issue 31's ninth round: a request whose object names nothing of its own, read from the request's own parse.

Every message here was written for this file, none is a line of a labelled set (tests/test_router_phrasings.py checks
this file too). The families are the kinds of message the router used to send to the wrong mode (found in the
looked-at two thirds of routing_tuning10.jsonl and routing_tuning9.jsonl), in wordings of their own; each is routed
twice: by the shipped weights on text signals alone (what routing falls back to) and by the real router with the
default embedding model (what a deployment routes with).
"""

from __future__ import annotations

import pytest

from services.router.objects import request_object
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 (a fixture)

# A request (after a greeting or thanks in any language, or "can you") whose object is only pointers at an earlier turn:
# with no earlier turn there is nothing to act on, so the person is asked.
POINTED_OBJECTS = [
    "Gracias, and forward the same to my aunt",
    "Could you do the same for the netball team?",
    "Shalom — can you pop his address in too?",
    "Right, now sort the others as well",
    "could you save what my dentist said about the crown",
    "please book it like last time, same table, same time",
    "Cheers, can you put that one we mentioned on the list?",
    "can you set that target up again like last year?",
    "pls doooo it again 4 the twins",
    "keep what I told you about the garage door",
    "Obrigado! And the rest too please",
    "would you mind sending the same to Jo",  # a request asked as "would you mind" + its gerund
]

# A placeholder object ("something", "a few things", "a reminder") names nothing, whatever it is for or when.
PLACEHOLDER_OBJECTS = [
    "Could you jot something down for me, ta",
    "can you book a few things for the weekend",
    "Can you give me a reminder tomorrow",
]


@pytest.mark.parametrize("text", POINTED_OBJECTS + PLACEHOLDER_OBJECTS)
def test_a_request_on_pointers_or_a_placeholder_alone_needs_asking(routers, text):  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


# The counter-examples: the message names the object itself, before the pointer, after it, or in a clause.
NAMED_OBJECTS = [
    ("My bike lock code is 7731, save that", "memorize"),
    ("We're out of rice, add it to the shopping list", "list"),
    ("could you jot down that the plumber comes on Tuesday", "memorize"),
    ("set a reminder for Friday at 9 to ring the vet", "schedule"),
    ("delete what I told you about my old flat", "forget"),
    # A command after a spaced dash, at the end of chit-chat, still commands.
    ("Long day at the allotment, the beans are finally up - remember that the water butt needs emptying on Sundays",
     "memorize"),
]


@pytest.mark.parametrize(("text", "skill"), NAMED_OBJECTS)
def test_a_request_whose_message_names_the_object_runs(routers, text, skill):  # noqa: F811
    assert routes(routers, text) == {("ACT", skill)}


def _routes_after(routers, text: str, before: tuple[str, str]) -> set[tuple[str, str | None]]:  # noqa: F811
    from services.router.mode_router import context_from_record
    from services.router.skills import skill_hint

    got = set()
    for router in routers:
        embedding = router.embedder.embed(text) if router.embedder is not None else None
        decision = router.route(context_from_record(text, {"working_memory": [list(before)]}, embedding))
        got.add((decision.mode, skill_hint(text, decision.signals) if decision.mode == "ACT" else None))
    return got


def test_an_earlier_turn_gives_the_pointer_its_object(routers):  # noqa: F811
    # The same words with an earlier turn to point at are a command that can run.
    assert _routes_after(routers, "do the same for my camping list",
                         ("add eggs and milk to my shopping list", "Added eggs and milk to your shopping list.")) == {
        ("ACT", "list")}
    locker = ("my locker number at the gym is 88", "Got it, locker 88.")
    assert _routes_after(routers, "could you save that for me?", locker) == {("ACT", "memorize")}


def test_asking_what_was_told_is_still_a_question(routers):  # noqa: F811
    assert routes(routers, "what did I tell you about the garage door?") == {("RESPOND", None)}


# Questions without a question mark: a misspelt question word, or a later clause asking what a thing is.
QUESTIONS = [
    "wots the best way to clean a cast iron pan",
    "my knees ache after every run, is that normal or is it my shoes",
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_a_question_without_its_mark_is_answered(routers, text):  # noqa: F811
    assert routes(routers, text) == {("RESPOND", None)}


@pytest.mark.parametrize(("text", "kind"), [
    ("Gracias, and forward the same to my aunt", "pointer"),
    ("Shalom — can you pop his address in too?", "pointer"),
    ("could you save what my dentist said about the crown", "pointer"),
    ("Could you jot something down for me, ta", "generic"),
    ("My bike lock code is 7731, save that", "named"),
    ("delete what I told you about my old flat", "named"),
    ("set a reminder for Friday at 9 to ring the vet", "named"),
])
def test_the_request_object_is_read_from_the_parse(text, kind):
    found = request_object(text.lower())
    assert found is not None and found.kind == kind


def test_no_request_no_object():
    assert request_object("the same thing happened to my aunt last week") is None
    assert request_object("we should do the same next year") is None
