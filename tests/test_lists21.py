"""List changes people typed (people20 and people21 of the answers bench) that were not read, each in its general form:
a topic said before "take X off the list" (the list meant is the one holding X); a list named and then a dash; a list
named by whose it is ("Wyatt's camp list"); the item said first and then "remove it"; "put a new veil on it" (the "on
it" and an "instead" or a reason after the item are no part of it); a request followed by a question about it ("… is
that how ya does it?"); a list named with "change:" or after "right,"; an aside saying what a list is ("messages list
is the shopping by the way"); and a swap said with no list ("Nikos doesn't want headphones anymore, he wants a gaming
mouse") on the one list holding the item."""

from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import select

from services.act.fastpath import plain_action, said_items
from services.act.list_edits import list_edits
from services.act.models import ListItem, NamedList
from services.act.request_words import FAST_PATH
from services.queues import ChatRequest
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.act_fixtures import NOW
from tests.test_gaps18 import TOKYO, ada, fast_path_turn  # noqa: F401 - ada: test_act_loop's person
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture
from workers.understanding import understand

LIST = {"skill_list": 1.0}


def _edits(text: str, holder: str | None = None) -> list[dict]:
    return [edit.arguments for edit in list_edits(text, LIST, lambda item: holder)]


# --- the fast path's reading, without a database ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "holder", "expected"), [
    # a topic said first, then "off the list": the list holding the item
    ("About the harambee, take the soda off the list, my brother-in-law Mwangi says he will bring the crates himself. "
     "Add a big thermos flask instead because we will be serving tea outside.", "harambee",
     [("remove", "harambee", ["soda"]), ("add", "harambee", ["big thermos flask"])]),
    ("As for Saturday, cross the charcoal off the list, Tom has loads. Put firelighters on instead.", "weekend bbq",
     [("remove", "weekend bbq", ["charcoal"]), ("add", "weekend bbq", ["firelighters"])]),
    ("take the sunscreen off the list, found some in the car", "beach",
     [("remove", "beach", ["sunscreen"])]),
    # a list named, then a dash
    ("for gifts list - remove the choco pie please, my sister say they sell it in Tashkent in Korzinka now. Instead "
     "put honey butter chips, nephews will like", None,
     [("remove", "gifts", ["choco pie"]), ("add", "gifts", ["honey butter chips"])]),
    ("camping list \u2013 drop the stove pls, Jo is bringing hers. Instead add a lighter", None,
     [("remove", "camping", ["stove"]), ("add", "camping", ["lighter"])]),
    # the list named by whose it is, and a reason run on after the item added
    ("Take the flashlight off Wyatt's camp list, turns out he's got one from scouts I didn't even know about. Add "
     "sunscreen, that boy burns like a lobster", None,
     [("remove", "wyatt's camp", ["flashlight"]), ("add", "wyatt's camp", ["sunscreen"])]),
    ("Remove the crayons from Mia's school list. Add earplugs, that class is so loud", None,
     [("remove", "mia's school", ["crayons"]), ("add", "mia's school", ["earplugs"])]),
    # the item first, then "it"
    ("the watch for papa, remove it from the pasalubong list, my brother bought him one already ay naku. Put a tablet "
     "for Bea instead, for her school", None,
     [("remove", "pasalubong", ["watch for papa"]), ("add", "pasalubong", ["tablet for Bea"])]),
    ("The big speaker - cross it off the party list, the venue has one", None,
     [("remove", "party", ["big speaker"])]),
    # "on it" after the item
    ("Take the smoker fuel off the bee list, I found a half bag of it in the shed behind the paint tins. And put a new "
     "veil on it, the old one has a hole you could drive a tractor through.", None,
     [("remove", "bee", ["smoker fuel"]), ("add", "bee", ["new veil"])]),
    ("Cross the rope off the boat list. Put a spare pump on it, ours is leaking", None,
     [("remove", "boat", ["rope"]), ("add", "boat", ["spare pump"])]),
    # "… list change:", "right, the … list"
    ("pasalubong list change: remove the polvoron, Tita Baby is on keto daw lol. put piaya instead... ay wait piaya is "
     "FROM iloilo haha. ok put ensaymada na lang", None,
     [("remove", "pasalubong", ["polvoron"]), ("add", "pasalubong", ["ensaymada"])]),
    ("garden list update: remove the compost, add bark chips", None,
     [("remove", "garden", ["compost"]), ("add", "garden", ["bark chips"])]),
    ("right the messages list, scrap the Irn Bru, dentist gave Callum a right row about fizzy juice, he's got braces "
     "in. stick porridge oats on instead", None,
     [("remove", "messages", ["Irn Bru"]), ("add", "messages", ["porridge oats"])]),
    ("right, the party list. ditch the balloons, the cat pops them. pop candles on instead", None,
     [("remove", "party", ["balloons"]), ("add", "party", ["candles"])]),
    # a swap with no list named: the one list holding the item
    ("Nikos doesn't want headphones anymore, he wants a gaming mouse", "christmas gift",
     [("remove", "christmas gift", ["headphones"]), ("add", "christmas gift", ["gaming mouse"])]),
])
def test_a_list_change_as_people_type_it_is_read(text: str, holder: str | None, expected: list) -> None:
    assert [(edit["operation"], edit["name"], edit["items"]) for edit in _edits(text, holder)] == expected


def test_off_the_list_with_no_list_holding_the_item_is_left_to_the_planner() -> None:
    assert _edits("take the sunscreen off the list, found some in the car") == []


@pytest.mark.parametrize(("text", "name", "items"), [
    ("can you add tattie scones, square sausage, milk and a big bottle of Irn Bru to the messages list. messages list "
     "is the shopping by the way, that's what we call it here", "messages",
     ["tattie scones", "square sausage", "milk", "big bottle of Irn Bru"]),
    ("add bin bags to the errands list. errands list is my to-do by the way", "errands", ["bin bags"]),
    ("ok Shelley says try this. create a cabin list with propane, mousetraps, 2 stroke oil and a new tarp for the "
     "woodpile. is that how ya does it?", "cabin",
     ["propane", "mousetraps", "2 stroke oil", "new tarp for the woodpile"]),
])
def test_an_aside_or_a_question_about_the_request_leaves_the_add_to_the_fast_path(text: str, name: str,
                                                                                  items: list) -> None:
    action = plain_action(text, collect_signals(RoutingContext(text=text)) | LIST, NOW, TOKYO)
    assert action is not None and action.arguments == {"operation": "add", "name": name, "items": items}


@pytest.mark.parametrize(("said", "items"), [
    ("new veil on it", ["new veil"]),
    ("a big thermos flask instead because we will be serving tea outside", ["big thermos flask"]),
    ("ensaymada na lang", ["ensaymada"]),
    ("sunscreen, that boy burns like a lobster", ["sunscreen"]),
    ("a tablet for Bea instead, for her school", ["tablet for Bea"]),
    # not cut: the words belong to the thing
    ("cable ties, that stuff for the roof", ["cable ties", "that stuff for the roof"]),
    ("a lid for the pot", ["lid for the pot"]),
])
def test_what_follows_an_item_and_is_no_part_of_it(said: str, items: list) -> None:
    assert said_items(said) == items


# --- the router ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "ok Shelley says try this. create a cabin list with propane, mousetraps, 2 stroke oil and a new tarp for the "
    "woodpile. is that how ya does it?",
    "make a packing list with passport, adapters and sunscreen. is this how it works?",
    "pasalubong list change: remove the polvoron, Tita Baby is on keto daw lol. put piaya instead... ay wait piaya is "
    "FROM iloilo haha. ok put ensaymada na lang",
    "garden list update: remove the compost, add bark chips",
    "right the messages list, scrap the Irn Bru, dentist gave Callum a right row about fizzy juice, he's got braces "
    "in. stick porridge oats on instead",
    "About the harambee, take the soda off the list, my brother-in-law Mwangi says he will bring the crates himself. "
    "Add a big thermos flask instead because we will be serving tea outside.",
    "for gifts list - remove the choco pie please, my sister say they sell it in Tashkent in Korzinka now. Instead put "
    "honey butter chips, nephews will like",
    "the watch for papa, remove it from the pasalubong list, my brother bought him one already ay naku. Put a tablet "
    "for Bea instead, for her school",
])
def test_a_list_change_as_people_type_it_is_a_list_request_to_the_router(routers: list[ModeRouter],  # noqa: F811
                                                                          text: str) -> None:
    assert routes(routers, text) == {("ACT", "list")}


@pytest.mark.parametrize("text", [
    "Is a paper list or an app better for groceries? Is that how most people do it?",
    "I always forget my lists. Is that normal?",
])
def test_a_question_about_lists_is_still_answered(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert {mode for mode, _ in routes(routers, text)} == {"RESPOND"}


# --- whole turns: the list holds exactly the right items ------------------------------------------------------------

def _lists(db_engine, **lists: list[str]) -> None:  # type: ignore[no-untyped-def]
    with db_engine.begin() as connection:
        for name, things in lists.items():
            made = connection.execute(NamedList.__table__.insert().values(user_id="ada", name=name.replace("_", " "))
                                      .returning(NamedList.id)).scalar_one()
            for position, thing in enumerate(things, start=1):
                connection.execute(ListItem.__table__.insert().values(list_id=made, text=thing, position=position))


def _on(db_engine, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    with db_engine.connect() as connection:
        return list(connection.scalars(select(ListItem.text).join(NamedList, NamedList.id == ListItem.list_id)
                                       .where(NamedList.name == name).order_by(ListItem.position)))


@pytest.mark.integration
@pytest.mark.parametrize(("lists", "text", "name", "after"), [
    ({"harambee": ["sugar", "two crates of soda", "serviettes", "tea leaves"], "party": ["soda water"]},
     "About the harambee, take the soda off the list, my brother-in-law Mwangi says he will bring the crates himself. "
     "Add a big thermos flask instead because we will be serving tea outside.",
     "harambee", ["sugar", "serviettes", "tea leaves", "big thermos flask"]),
    ({"weekend bbq": ["charcoal", "burgers"], "shopping": ["milk"]},
     "As for Saturday, cross the charcoal off the list, Tom has loads. Put firelighters on instead.",
     "weekend bbq", ["burgers", "firelighters"]),
    ({"gifts": ["korean cosmetics for my sister", "red ginseng for my father", "choco pie for the nephews"]},
     "for gifts list - remove the choco pie please, my sister say they sell it in Tashkent in Korzinka now. Instead "
     "put honey butter chips, nephews will like",
     "gifts", ["korean cosmetics for my sister", "red ginseng for my father", "honey butter chips"]),
    ({"camp": ["sleeping bag", "bug spray", "flashlight"]},
     "Take the flashlight off Wyatt's camp list, turns out he's got one from scouts I didn't even know about. Add "
     "sunscreen, that boy burns like a lobster",
     "camp", ["sleeping bag", "bug spray", "sunscreen"]),
    ({"pasalubong": ["Toblerone for Bea", "perfume for Marites", "watch for Papa"]},
     "the watch for papa, remove it from the pasalubong list, my brother bought him one already ay naku. Put a tablet "
     "for Bea instead, for her school",
     "pasalubong", ["Toblerone for Bea", "perfume for Marites", "tablet for Bea"]),
    ({"bee": ["smoker fuel", "hive tool"]},
     "Take the smoker fuel off the bee list, I found a half bag of it in the shed behind the paint tins. And put a new "
     "veil on it, the old one has a hole you could drive a tractor through.",
     "bee", ["hive tool", "new veil"]),
    ({"pasalubong": ["dried mangoes", "ube halaya", "polvoron"]},
     "pasalubong list change: remove the polvoron, Tita Baby is on keto daw lol. put piaya instead... ay wait piaya is "
     "FROM iloilo haha. ok put ensaymada na lang",
     "pasalubong", ["dried mangoes", "ube halaya", "ensaymada"]),
    ({"messages": ["tattie scones", "square sausage", "milk", "big bottle of Irn Bru"]},
     "right the messages list, scrap the Irn Bru, dentist gave Callum a right row about fizzy juice, he's got braces "
     "in. stick porridge oats on instead",
     "messages", ["tattie scones", "square sausage", "milk", "porridge oats"]),
    ({"shopping": ["eggs"]},
     "can you add tattie scones, square sausage, milk and a big bottle of Irn Bru to the messages list. messages list "
     "is the shopping by the way, that's what we call it here",
     "messages", ["tattie scones", "square sausage", "milk", "big bottle of Irn Bru"]),
    ({"christmas gift": ["football for Stavros", "headphones for Nikos", "scarf"], "shopping": ["milk"]},
     "Nikos doesn't want headphones anymore, he wants a gaming mouse",
     "christmas gift", ["football for Stavros", "scarf", "gaming mouse"]),
])
def test_a_list_change_as_people_type_it_leaves_the_list_right(worker_context, ada, db_engine,  # noqa: F811
                                                               lists: dict, text: str, name: str,
                                                               after: list) -> None:
    _lists(db_engine, **lists)
    outcome = fast_path_turn(worker_context, text, LIST)
    assert outcome.reason == FAST_PATH, outcome.trail  # not the planner's
    assert _on(db_engine, name) == after, outcome.trail


def _understood(worker_context, text: str):  # type: ignore[no-untyped-def]
    request = ChatRequest(request_id=str(uuid.uuid4()), user_id="ada", thread_id="thread-1", text=text,
                          source="text", received_at=time.time())
    return understand(worker_context, request, (worker_context.threads.state("thread-1"), []))


@pytest.mark.integration
@pytest.mark.parametrize("text", ["Nikos doesn't want headphones anymore, he wants a gaming mouse",
                                  "nikos no longer wants the headphones, he'd rather have a gaming mouse now"])
def test_a_swap_said_with_no_list_is_a_list_change_when_a_list_holds_the_thing(worker_context, ada,  # noqa: F811
                                                                               db_engine, text: str) -> None:
    _lists(db_engine, christmas_gift=["football for Stavros", "headphones for Nikos", "scarf"])
    understood = _understood(worker_context, text)
    assert understood.mode == "ACT" and understood.signals["skill_list"]
    outcome = fast_path_turn(worker_context, text, understood.signals)
    assert outcome.reason == FAST_PATH, outcome.trail
    assert _on(db_engine, "christmas gift") == ["football for Stavros", "scarf", "gaming mouse"]


@pytest.mark.integration
def test_a_swap_of_a_thing_on_no_list_is_news(worker_context, ada, db_engine) -> None:  # noqa: F811
    _lists(db_engine, christmas_gift=["football for Stavros", "scarf"])
    understood = _understood(worker_context, "Nikos doesn't want headphones anymore, he wants a gaming mouse")
    assert understood.mode != "ACT" and not understood.signals.get("skill_list")
