"""What the eighteenth session's tuning people (bogdan, tallulah, esperanza, olumide, radek) lost, each in its general
form: a list made as a "wishlist" was named by the word before it ("bday"), so "add … to my wishlist" found no list
and the item was lost; "please" in another language or English ("abeg", Nigerian English) left a list request to the
model, and after a sentence of news routed it ACKNOWLEDGE, so no list was made; "Please also add …" and "make new list,
name it truck list, with …" were left to the planner; "my class is on Fridays now instead of Tuesdays" ended nothing,
so the 1.5B answered with both days; and "wetin I fit grill?" ("what can I grill?") was no request for an idea, so the
reminders and lists were put before it (the 1.5B suggested the generator) and the person's diet was not."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.orm import Session

from services.act.fastpath import plain_action
from services.memory.changes import change_in
from services.memory.facts import list_facts, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.notes import about_plans, asks_for_ideas, tells_taste
from services.memory.refusals import refused_things
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.memory_builders import create_user
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)
ZONE = ZoneInfo("Europe/London")


def _signals(text: str) -> dict:
    return collect_signals(RoutingContext(text=text))


def _action(text: str):  # type: ignore[no-untyped-def]
    return plain_action(text, _signals(text), NOW, ZONE)


@pytest.mark.parametrize(("text", "arguments"), [
    ("can u make a xmas wishlist with a lego set, headphones n a skateboard",
     {"operation": "add", "name": "xmas wish", "items": ["lego set", "headphones", "skateboard"]}),
    ("put a yoga mat on my wishlist too", {"operation": "add", "name": "wish", "items": ["yoga mat"]}),
    ("what's on my xmas wishlist?", {"operation": "view", "name": "xmas wish"}),
])
def test_a_wishlist_is_named_as_the_list_skill_finds_it_again(routers: list[ModeRouter],  # noqa: F811
                                                              text: str, arguments: dict) -> None:
    assert routes(routers, text) == {("ACT", "list")}
    action = _action(text)
    assert action is not None and action.arguments == arguments


@pytest.mark.integration
def test_an_item_added_to_my_wishlist_lands_on_the_wishlist_made_before(skill, db_engine) -> None:
    made = _action("can u make a xmas wishlist with a lego set, headphones n a skateboard")
    added = _action("put a yoga mat on my wishlist too")
    assert made is not None and added is not None
    assert skill("list", made.arguments).ok and skill("list", added.arguments).ok
    viewed = skill("list", {"operation": "view", "name": "Xmas Wishlist"})
    assert viewed.ok
    assert [item["text"] for item in viewed.result["items"]] == ["lego set", "headphones", "skateboard", "yoga mat"]


@pytest.mark.parametrize(("text", "arguments"), [
    ("Light don go again since yesterday. Abeg create a solar list with inverter, two batteries and cables",
     {"operation": "add", "name": "solar", "items": ["inverter", "two batteries", "cables"]}),
    ("Add fuel can to the solar list abeg, the old one dey leak",
     {"operation": "add", "name": "solar", "items": ["fuel can"]}),
    ("Please also add napkins and candles to the dinner party list.",
     {"operation": "add", "name": "dinner party", "items": ["napkins", "candles"]}),
    ("bitte start a list for the ski trip with goggles and gloves",
     {"operation": "add", "name": "ski trip", "items": ["goggles", "gloves"]}),
    ("pls make new list, name it boat list, with life jackets, rope and sunscreen",
     {"operation": "add", "name": "boat list", "items": ["life jackets", "rope", "sunscreen"]}),
])
def test_a_list_request_said_with_please_of_any_kind_is_done(routers: list[ModeRouter],  # noqa: F811
                                                            text: str, arguments: dict) -> None:
    assert routes(routers, text) == {("ACT", "list")}
    action = _action(text)
    assert action is not None and action.arguments == arguments


def test_please_abroad_is_no_item() -> None:
    action = _action("add oat milk to the shopping list por favor")
    assert action is not None and action.arguments["items"] == ["oat milk"]


@pytest.mark.parametrize(("text", "things"), [
    ("The pool changed the timetable, so the user's swimming lesson is on Thursdays now instead of Mondays",
     {"swim", "less"}),
    ("The user's choir practice is at 8 now, not 7", {"choi", "prac"}),
])
def test_a_time_said_in_place_of_an_old_one_moves_the_thing(text: str, things: set) -> None:
    change = change_in(text)
    assert change is not None and change.rescheduled == things


@pytest.mark.parametrize("text", ["The user is on the bus now, not the train", "The user is at home now instead of "
                                  "the office"])
def test_a_person_somewhere_else_moves_nothing(text: str) -> None:
    assert change_in(text) is None


@pytest.fixture
def session(db_engine):  # type: ignore[no-untyped-def]
    with Session(db_engine) as session:
        create_user(session, user_id="esp")
        yield session
        session.rollback()


@pytest.mark.integration
def test_the_old_day_of_a_class_moved_to_another_day_is_not_kept(session, hash_embedder) -> None:
    remember_fact(session, hash_embedder, "esp", "The user goes to swimming lessons at the leisure centre every "
                                                 "Monday evening, it is good for the user's back")
    remember_fact(session, hash_embedder, "esp", "The user's granddaughter sings in the choir on Mondays")
    newer = ("The pool changed the timetable, so the user's swimming lesson is on Thursdays now instead of Mondays")
    remember_fact(session, hash_embedder, "esp", newer)
    texts = {fact.text for fact in list_facts(session, "esp")}
    assert newer in texts and not any("every Monday evening" in text for text in texts)
    assert "The user's granddaughter sings in the choir on Mondays" in texts


@pytest.mark.parametrize("text", [
    "The boys are coming round on Saturday, wetin I fit cook for them?",
    "what i should make for dinner tonight?",
    "What could we bring to the barbecue this weekend?",
    "what kind of stretches should I do before the run tomorrow morning?",
    "whats a quick dinner i cud make tonight",
    "Tonight film at home. What I watch?",
    "Saturday road trip, gimme 3 podcasts for the drive",
    "What's the easiest way for me to get to Leeds on Friday to see my sister?",
])
def test_a_request_for_an_idea_with_a_time_goes_without_the_reminders_and_lists(text: str) -> None:
    pending = ["- reminder for Saturday at 07:00: take Tobi to the barber.", "- your generator list: air filter."]
    assert asks_for_ideas(text)
    assert not about_plans(text, pending)


@pytest.mark.parametrize("text", ["What have I got on this weekend?", "What time is my flight on Friday?",
                                  "Which day is my barber appointment?"])
def test_a_question_about_the_persons_own_plans_still_reads_what_is_set_for_them(text: str) -> None:
    pending = ["- reminder for Saturday at 07:00: take Tobi to the barber."]
    assert not asks_for_ideas(text)
    assert about_plans(text, pending)


@pytest.mark.parametrize(("fact", "refused"), [
    ("The user is Muslim, no pork suggestions please", {"pork", "bacon", "beer"}),
    ("The user no dey eat beef at all", {"beef"}),
    ("The user no eat mushrooms", {"mushroom"}),
])
def test_a_refusal_said_as_people_say_it_is_kept_from_suggestions(fact: str, refused: set) -> None:
    assert tells_taste(fact)
    assert refused <= refused_things(fact)


@pytest.mark.parametrize("fact", ["The user has no idea where the keys are", "The user had no time to eat lunch"])
def test_no_without_a_refused_thing_refuses_nothing(fact: str) -> None:
    assert not refused_things(fact)


@pytest.mark.parametrize(("said", "facts"), [
    ("Make I tell you one thing: I no dey eat beef at all, I'm Hindu.",
     ["The user no dey eat beef at all", "The user is Hindu"]),
    ("Let me tell you something: my brother lives in Accra.", ["The user's brother lives in Accra"]),
    ("Just so you know, I am allergic to kiwi.", ["The user is allergic to kiwi"]),
    ("I must say you one thing: I don't eat mushrooms, never.", ["The user don't eat mushrooms, never"]),
    ("Tell you what: I am done with night shifts.", ["The user is done with night shifts"]),
    ("One thing I love is salsa dancing.", ["One thing the user love is salsa dancing"]),
    ("I told my landlord: I am leaving in June.", ["The user told the user's landlord: the user is leaving in June"]),
])
def test_an_announcement_before_what_is_told_is_no_part_of_the_fact(said: str, facts: list) -> None:
    assert [fact["text"] for fact in chunk_from_words(said)["facts"]] == facts
