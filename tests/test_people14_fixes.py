"""What the fourteenth session's people (rangi, daniela, edmund, kayla, noor) lost, each in its general form: a list
changed in one message whose list is named first as a heading ("boat list. take the bucket off. add …", "for the party
list remove the pinata, …"), with a learner's "of" for "from", with a reason run on after the list's name, with "it"
for a title typed just before, or with "do add"; a list made "for" a place written with its accents or "w" its items;
and items kept with the capitals they were typed with."""

from __future__ import annotations

import datetime as dt
from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session

from services.act.fastpath import plain_action
from services.act.list_edits import list_edits
from services.memory.context import Personal, Remembered, compact_split
from services.memory.facts import list_facts, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.identity import IDENTITY_SALIENCE
from services.memory.notes import Budget
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.memory_builders import create_user
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)


def _edits(text: str) -> list[tuple[str, str, list[str]]]:
    found = list_edits(text, collect_signals(RoutingContext(text=text)))
    return [(edit.arguments["operation"], edit.arguments["name"], edit.arguments["items"]) for edit in found]


def _fast(text: str):  # type: ignore[no-untyped-def]
    action = plain_action(text, collect_signals(RoutingContext(text=text)), NOW, UTC)
    return None if action is None else (action.skill, action.arguments)


def test_a_list_named_first_as_a_heading_takes_the_changes_after_it() -> None:
    """"boat list. take the bucket off. add …" was answered "Good idea! Let's get started." and nothing changed."""
    assert _edits("camping list. take the stove off. add matches and a tarp") == [
        ("remove", "camping", ["stove"]), ("add", "camping", ["matches", "tarp"])]
    assert _edits("Shopping list: cross off the eggs, and add flour") == [
        ("remove", "shopping", ["eggs"]), ("add", "shopping", ["flour"])]
    picnic = "for the picnic list remove the wine, Tom says it's a school event, and add lemonade and cups pls"
    assert _edits(picnic) == [("remove", "picnic", ["wine"]), ("add", "picnic", ["lemonade", "cups"])]
    assert _edits("On my gym list - drop the towel") == [("remove", "gym", ["towel"])]


def test_a_heading_then_something_else_or_a_sentence_ending_in_list_changes_nothing() -> None:
    assert _edits("camping list. take the stove off. remind me at 5 to pack") == []
    assert _edits("i love my camping list. take the stove off") == []  # no heading: which list?
    assert _edits("camping list. what's on it?") == []
    assert _edits("take the day off") == []
    assert _edits("reading list. take a look at it") == []  # "take" removes only with its "off"


def test_a_learners_of_and_a_reason_run_on_after_the_name_still_name_the_list() -> None:
    """"Remove the sunscreen of my Chiloé list, …" and "take the rug off my apartment list jess has one." reached the
    planner, which took neither change."""
    assert _edits("Remove the shorts of my Patagonia list, it is cold there. And add a scarf.") == [
        ("remove", "patagonia", ["shorts"]), ("add", "patagonia", ["scarf"])]
    assert _edits("take the lamp off my dorm list mum has one. add a kettle to it") == [
        ("remove", "dorm", ["lamp"]), ("add", "dorm", ["kettle"])]
    assert _edits("remove the last of the eggs") == []  # no list named


def test_it_after_a_title_typed_just_before_is_that_title() -> None:
    """"I have decided against Middlemarch; please remove it from my reading list. Do add …": the planner removed it
    and never added the two books."""
    assert _edits("I have gone off Moby Dick; please remove it from my reading list. Do add Emma and The Hobbit.") == [
        ("remove", "reading", ["Moby Dick"]), ("add", "reading", ["Emma", "Hobbit"])]
    # Two names before it, or none typed with capitals: which one is not said, so the planner asks.
    assert _edits("Between Emma and Persuasion I'm done; remove it from my reading list. Add Dune.") == []
    assert _edits("i have gone off moby dick; please remove it from my reading list. do add emma.") == []


def test_items_keep_the_capitals_they_were_typed_with() -> None:
    assert _fast("Please create a reading list with Wolf Hall, Middlemarch and The Shipping News.") == (
        "list", {"operation": "add", "name": "reading", "items": ["Wolf Hall", "Middlemarch", "Shipping News"]})
    assert _fast("add oat milk to my shopping list") == (
        "list", {"operation": "add", "name": "shopping", "items": ["oat milk"]})


def test_a_list_for_an_accented_place_or_made_w_its_items_is_made_with_them() -> None:
    """"Create a list for my trip to Chiloé with …" went to the planner; "create an apartment list w mini fridge, …"
    was answered in prose and no list was kept."""
    assert _fast("Create a list for my trip to Málaga with sunscreen, sandals and a hat") == (
        "list", {"operation": "add", "name": "trip to málaga", "items": ["sunscreen", "sandals", "hat"]})
    assert _fast("create a dorm list w desk lamp, hangers n a kettle") == (
        "list", {"operation": "add", "name": "dorm", "items": ["desk lamp", "hangers", "kettle"]})


@pytest.mark.parametrize("text", [
    "fishing list. take the net off. add bait and a cooler",
    "for the party list remove the streamers, the hall won't allow them, and add candles pls",
    "Remove the sandals of my Tromsø list, in March is snow there haha. And add boots.",
    "what's on my Tromsø list",
    "create a dorm list w desk lamp, hangers n a kettle",
])
def test_these_list_requests_route_to_act_with_the_list_skill(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}


@pytest.mark.parametrize("text", [
    "My reading list is getting long, any tips for reading faster?",
    "Reading list. Take a look at it and tell me if it's too ambitious",
    "The packing list app crashed. Remove it or keep it?",
])
def test_talk_about_a_list_still_routes_as_before(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert ("ACT", "list") not in routes(routers, text)


def _facts(message: str) -> list[str]:
    return [fact["text"] for fact in chunk_from_words(message)["facts"]]


def test_requests_however_politely_opened_are_no_facts_and_what_is_told_before_a_semicolon_is() -> None:
    """"Kindly remind me …", "Please also remind me …" and "…; please remove it from my reading list" were kept as
    facts and took the places of the person's own in the small model's notes (its job was pushed out)."""
    assert _facts("Kindly remind me on Friday at 10 to phone the surgery.") == []
    assert _facts("Please also remind me on Sunday at 6 to feed the hens.") == []
    assert _facts("I've gone off Moby Dick; please take it off my reading list.") == ["The user has gone off Moby Dick"]


def test_an_introduction_and_a_teachers_work_are_who_the_person_is() -> None:
    """"Allow me to introduce myself: my name is …" was kept as "Allow the user to introduce the user: …", and
    "I taught history at …" as chatter: neither held its place in the notes, and "which subject did I teach?" was
    answered "English"."""
    facts = {fact["text"]: fact.get("salience") for fact in
             chunk_from_words("Good evening. Let me introduce myself: my name is Ruth Okafor, and I live in Leeds.")[
                 "facts"]}
    assert facts == {"The user's name is Ruth Okafor": IDENTITY_SALIENCE, "The user live in Leeds": IDENTITY_SALIENCE}
    taught = chunk_from_words("I taught chemistry at St Mary's for twenty years.")["facts"]
    assert [(fact["text"], fact.get("salience")) for fact in taught] == [
        ("The user taught chemistry at St Mary's for twenty years", IDENTITY_SALIENCE)]


def test_how_the_person_wants_answers_is_kept_with_the_assistant_named() -> None:
    """"when you tell me prices please use Jordanian dinars not dollars" was read as a question and dropped: the
    groceries were priced in dollars."""
    assert _facts("Oh and when you tell me prices please use Kenyan shillings not dollars, I can't convert") == [
        "When Engram tell the user prices please use Kenyan shillings not dollars", "The user can't convert"]
    assert _facts("When you suggest recipes, keep them under 30 minutes.") == [
        "When Engram suggest recipes, keep them under 30 minutes"]
    assert _facts("When I was a boy I lived in Cork.") == ["When the user was a boy the user lived in Cork"]
    assert _facts("when are you free?") == [] and _facts("When you get a chance.") == []
    # "You must ask that you never recommend television programmes" was the note of a request to the assistant.
    assert _facts("I must ask that you never recommend horror films to me.") == [
        "The user must ask that Engram never recommend horror films to the user"]


@pytest.mark.integration
def test_living_alone_with_a_pet_keeps_where_the_person_lives(db_engine, hash_embedder) -> None:
    """"I now live alone with a rather elderly budgerigar" ended "I live in Halifax": the person's home was lost."""
    told = ["Let me introduce myself: my name is Edmund, and I live in Halifax, Nova Scotia.",
            "My late wife passed away in 2019. I now live alone with a budgie named Captain."]
    with Session(db_engine) as session:
        create_user(session, user_id="people14-edmund")
        for message in told:
            for fact in chunk_from_words(message)["facts"]:
                remember_fact(session, hash_embedder, "people14-edmund", fact["text"])
        active = " | ".join(fact.text for fact in list_facts(session, "people14-edmund"))
        assert "Halifax" in active and "budgie" in active
        remember_fact(session, hash_embedder, "people14-edmund", "The user moved to Truro")
        active = " | ".join(fact.text for fact in list_facts(session, "people14-edmund"))
        assert "Halifax" not in active and "Truro" in active and "budgie" in active
        session.rollback()


def test_a_drink_asked_for_gets_what_the_person_only_drinks_in_its_note() -> None:
    """Asked "pulling an all nighter, suggest a drink", the 1.5B offered hot chocolate: "I only drink iced stuff, hot
    drinks r gross" was not among the tastes said again just before an ask for ideas."""
    at = dt.datetime(2030, 1, 10, tzinfo=UTC)
    personal = Personal(profile=[Remembered(1, "Fyi the user only drink iced stuff, hot drinks r gross lol", at),
                                 Remembered(2, "The user only has one car", at)])
    ask = "pulling an all nighter, suggest a drink"
    _about, note = compact_split(personal, [], [], [], Budget(2000), Budget(2000), ask)
    assert "iced stuff" in note and "one car" not in note
    _about, note = compact_split(personal, [], [], [], Budget(2000), Budget(2000), "what's my roommate's name?")
    assert "iced stuff" not in note


def test_reminders_told_with_their_half_of_the_day_or_in_chat_are_set_without_the_planner() -> None:
    """The people's reminders reached the small model's planner (a model call and its risks): "at a quarter to
    eleven in the morning" was split at its "to", "the Tuesday at half past six in the evening" and "thurs @ 3" could
    not be read."""
    assert _fast("Kindly remind me on Friday at a quarter to ten in the morning to ring Dr. Amadi about my knee.") == (
        "schedule", {"operation": "create", "kind": "reminder", "text": "ring Dr. Amadi about my knee",
                     "due": "on friday at a quarter to ten in the morning"})
    assert _fast("remind me the Monday at half past seven in the evening to take Rocky to the vet")[1]["due"] == (
        "the monday at half past seven in the evening")
    assert _fast("remind me weds @ 4 to email professor kim abt the essay")[1]["due"] == "weds @ 4"
    assert _fast("can u remind me tmrw at 8 to call the garage")[1]["text"] == "call the garage"
