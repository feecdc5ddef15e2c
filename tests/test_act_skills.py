"""Each innate skill against PostgreSQL: what it does, and that bad arguments leave nothing half-written."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from sqlalchemy import select

from services.act.config import ActConfig, SkillLimits
from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.memory.facts import remember_fact
from services.memory.models import Fact
from tests.act_fixtures import NOW, USER, ZONE, count, items
from tests.memory_builders import create_user

pytestmark = pytest.mark.integration

# --- list -----------------------------------------------------------------------------------------

def test_list_lifecycle(skill, db_engine):
    added = skill("list", {"operation": "add", "name": "My Shopping List", "items": ["milk", "eggs"]})
    assert added.ok and added.result["list"] == "shopping" and added.result["added"] == ["milk", "eggs"]
    again = skill("list", {"operation": "add", "name": "shopping", "items": ["Milk", "bread"]})
    assert again.result["already_there"] == ["Milk"] and again.result["added"] == ["bread"]
    assert skill("list", {"operation": "check", "name": "shopping", "items": ["egg"]}).ok  # unique partial match
    assert skill("list", {"operation": "remove", "name": "shopping", "items": ["bread"]}).ok
    assert items(db_engine) == [("milk", False), ("eggs", True)]
    assert skill("list", {"operation": "uncheck", "name": "shopping", "items": ["eggs"]}).ok
    view = skill("list", {"operation": "view", "name": "shopping"}).result
    assert view["items"] == [{"text": "milk", "checked": False}, {"text": "eggs", "checked": False}]
    assert skill("list", {"operation": "view"}).result == {"lists": [{"name": "shopping", "items": 2}]}
    assert skill("list", {"operation": "delete", "name": "shopping"}).result["deleted"] is True
    assert count(db_engine, NamedList) == 0 and count(db_engine, ListItem) == 0


@pytest.mark.parametrize(("arguments", "code"), [
    ({"operation": "juggle", "name": "x"}, "invalid_arguments"),
    ({"operation": "add", "name": "shopping"}, "needs_info"),
    ({"operation": "add", "items": ["milk"]}, "needs_info"),
    ({"operation": "add", "name": "my list", "items": ["milk"]}, "needs_info"),
    ({"operation": "add", "name": "shopping", "items": ["   "]}, "invalid_arguments"),
    ({"operation": "add", "name": "shopping", "items": "milk"}, "invalid_arguments"),
    ({"operation": "view", "name": "nowhere"}, "not_found"),
    ({"operation": "add", "name": "shopping", "items": ["milk"], "colour": "red"}, "invalid_arguments"),
])
def test_list_bad_arguments_write_nothing(skill, db_engine, arguments, code):
    result = skill("list", arguments)
    assert not result.ok and result.error["code"] == code and result.error["message"]
    assert count(db_engine, NamedList) == 0


def test_list_change_with_one_unknown_item_changes_none(skill, db_engine):
    skill("list", {"operation": "add", "name": "packing", "items": ["socks", "charger"]})
    result = skill("list", {"operation": "remove", "name": "packing", "items": ["socks", "passport"]})
    assert result.error["code"] == "not_found" and result.error["available"] == ["socks", "charger"]
    assert items(db_engine) == [("socks", False), ("charger", False)]


def test_a_list_asked_for_by_part_of_its_name_is_the_one_list_holding_it(skill, db_engine):
    """"What I have in the list for the trip?" with a "brazil trip" list was answered "You don't have a trip list
    yet"; two lists holding the word leave it unknown, and a delete needs the list's own name."""
    skill("list", {"operation": "add", "name": "brazil trip", "items": ["passports", "green tea"]})
    view = skill("list", {"operation": "view", "name": "trip"}).result
    assert view["list"] == "brazil trip" and [item["text"] for item in view["items"]] == ["passports", "green tea"]
    assert skill("list", {"operation": "check", "name": "the trip list", "items": ["tea"]}).ok
    assert skill("list", {"operation": "delete", "name": "trip"}).error["code"] == "not_found"
    skill("list", {"operation": "add", "name": "school trip", "items": ["packed lunch"]})
    assert skill("list", {"operation": "view", "name": "trip"}).error["code"] == "not_found"
    assert sorted(items(db_engine)) == [("green tea", True), ("packed lunch", False), ("passports", False)]


def test_items_added_by_part_of_a_lists_name_or_whose_it_is_go_on_the_list_made_before(skill, db_engine):
    """"add carbón and bread to asado list" after "create list for asado sunday: …" made a second list, and "what is
    on asado list?" was answered with two items of six; "Oisín's party list" is the list made "for his party"."""
    skill("list", {"operation": "add", "name": "asado sunday", "items": ["vacío", "chorizo"]})
    assert skill("list", {"operation": "add", "name": "asado", "items": ["carbón"]}).result["list"] == "asado sunday"
    assert skill("list", {"operation": "add", "name": "his party", "items": ["balloons"]}).result["list"] == "party"
    added = skill("list", {"operation": "add", "name": "Oisín's party", "items": ["party poppers"]})
    assert added.result["list"] == "party"
    assert skill("list", {"operation": "view"}).result == {"lists": [{"name": "asado sunday", "items": 3},
                                                                     {"name": "party", "items": 2}]}
    skill("list", {"operation": "add", "name": "school trip", "items": ["packed lunch"]})
    skill("list", {"operation": "add", "name": "brazil trip", "items": ["passports"]})
    assert skill("list", {"operation": "add", "name": "trip", "items": ["map"]}).result["list"] == "trip"  # which?


def test_a_full_list_rolls_back_the_whole_action(skill, db_engine):
    config = dataclasses.replace(ActConfig(), skills=SkillLimits(max_list_items=2))
    result = skill("list", {"operation": "add", "name": "todo", "items": ["a", "b", "c"]}, config=config)
    assert result.error["code"] == "full"
    assert count(db_engine, NamedList) == 0 and count(db_engine, ListItem) == 0  # even the new list is gone


# --- schedule ---------------------------------------------------------------------------------------

def test_schedule_create_list_move_cancel(skill, db_engine):
    created = skill("schedule", {"operation": "create", "text": "call the dentist", "due": "tomorrow at 9",
                                 "recurrence": "weekdays"})
    view = created.result["created"]
    assert view["due_local"] == "2030-01-16T09:00+09:00" and view["due_utc"] == "2030-01-16T00:00+00:00"
    assert view["recurrence"] == "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    with db_engine.connect() as connection:
        row = connection.execute(select(ScheduledItem)).one()
    assert row.due_at == dt.datetime(2030, 1, 16, 0, 0, tzinfo=dt.UTC) and row.timezone == ZONE
    assert row.created_request_id == "req-1"
    skill("schedule", {"operation": "create", "kind": "prompt", "text": "plan my week", "due": "2030-01-20T18:00"})
    listed = skill("schedule", {"operation": "list"}).result["items"]
    assert [item["text"] for item in listed] == ["call the dentist", "plan my week"]
    moved = skill("schedule", {"operation": "move", "match": "dentist", "due": "in 2 hours"}).result["moved"]
    assert moved["due_utc"] == "2030-01-15T05:00+00:00"
    cancelled = skill("schedule", {"operation": "cancel", "item_id": row.id}).result["cancelled"]
    assert cancelled["status"] == "cancelled"
    assert [item["text"] for item in skill("schedule", {"operation": "list"}).result["items"]] == ["plan my week"]


@pytest.mark.parametrize(("arguments", "code"), [
    ({"operation": "create", "text": "x", "due": "yesterday at 9"}, "invalid"),
    ({"operation": "create", "text": "x", "due": "2020-01-01T09:00"}, "invalid"),
    ({"operation": "create", "text": "x", "due": "friday"}, "needs_info"),
    ({"operation": "create", "text": "x"}, "needs_info"),
    ({"operation": "create", "due": "tomorrow at 9"}, "needs_info"),
    ({"operation": "create", "text": "x", "due": "tomorrow at 9", "recurrence": "sometimes"}, "invalid"),
    ({"operation": "create", "text": "x", "due": "tomorrow at 9", "kind": "alarm"}, "invalid_arguments"),
    ({"operation": "cancel", "item_id": 999}, "not_found"),
    ({"operation": "cancel"}, "needs_info"),
    ({"operation": "move", "match": "dentist"}, "needs_info"),
])
def test_schedule_bad_arguments_write_nothing(skill, db_engine, arguments, code):
    result = skill("schedule", arguments)
    assert not result.ok and result.error["code"] == code, result
    assert count(db_engine, ScheduledItem) == 0


def test_schedule_ambiguous_match_changes_nothing(skill, db_engine):
    for text in ("call mum", "call dad"):
        skill("schedule", {"operation": "create", "text": text, "due": "tomorrow at 9"})
    result = skill("schedule", {"operation": "cancel", "match": "call"})
    assert result.error["code"] == "ambiguous" and sorted(result.error["candidates"]) == ["call dad", "call mum"]
    with db_engine.connect() as connection:
        assert set(connection.execute(select(ScheduledItem.status)).scalars()) == {"active"}


def test_schedule_by_id_finds_only_the_persons_active_items(skill, db_engine, worker_context):
    with worker_context.sessions.begin() as session:
        create_user(session, user_id="someone-else")
        theirs = ScheduledItem(user_id="someone-else", text="their reminder", due_at=NOW + dt.timedelta(days=1))
        session.add(theirs)
        session.flush()
        theirs_id = theirs.id
    mine = skill("schedule", {"operation": "create", "text": "water the plants", "due": "tomorrow at 9"})
    mine_id = mine.result["created"]["id"]
    foreign = skill("schedule", {"operation": "cancel", "item_id": theirs_id})
    assert foreign.error["code"] == "not_found" and [item["id"] for item in foreign.error["available"]] == [mine_id]
    assert skill("schedule", {"operation": "cancel", "item_id": mine_id}).result["cancelled"]["id"] == mine_id
    assert skill("schedule", {"operation": "cancel", "item_id": mine_id}).error["code"] == "not_found"  # not active
    with db_engine.connect() as connection:
        assert connection.execute(select(ScheduledItem.status).where(ScheduledItem.id == theirs_id)).scalar_one() \
            == "active"


# --- goal -------------------------------------------------------------------------------------------

def test_goal_create_update_list(skill):
    created = skill("goal", {"operation": "create", "text": "Run a marathon in spring"}).result["created"]
    assert created["state"] == "active"
    updated = skill("goal", {"operation": "update", "match": "marathon", "note": "ran 10 km", "state": "paused"})
    assert updated.result["updated"]["state"] == "paused"
    assert updated.result["updated"]["progress"][0]["note"] == "ran 10 km"
    assert [g["text"] for g in skill("goal", {"operation": "list"}).result["goals"]] == ["Run a marathon in spring"]


@pytest.mark.parametrize(("arguments", "code"), [
    ({"operation": "create"}, "needs_info"),
    ({"operation": "create", "text": "x", "state": "finished"}, "invalid_arguments"),
    ({"operation": "update", "goal_id": 5, "note": "progress"}, "not_found"),
    ({"operation": "update", "goal_id": 5}, "needs_info"),
    ({"operation": "update", "goal_id": "five", "note": "x"}, "invalid_arguments"),
])
def test_goal_bad_arguments_write_nothing(skill, db_engine, arguments, code):
    result = skill("goal", arguments)
    assert not result.ok and result.error["code"] == code
    assert count(db_engine, Goal) == 0


def test_goal_by_id_finds_only_the_persons_goals(skill, db_engine, worker_context):
    with worker_context.sessions.begin() as session:
        create_user(session, user_id="someone-else")
        theirs = Goal(user_id="someone-else", text="their goal")
        session.add(theirs)
        session.flush()
        theirs_id = theirs.id
    mine_id = skill("goal", {"operation": "create", "text": "Learn Portuguese"}).result["created"]["id"]
    foreign = skill("goal", {"operation": "update", "goal_id": theirs_id, "state": "done"})
    assert foreign.error["code"] == "not_found" and [goal["id"] for goal in foreign.error["available"]] == [mine_id]
    assert skill("goal", {"operation": "update", "goal_id": mine_id, "state": "done"}).result["updated"]["state"] == \
        "done"
    with db_engine.connect() as connection:
        assert connection.execute(select(Goal.state).where(Goal.id == theirs_id)).scalar_one() == "active"


# --- memory skills ----------------------------------------------------------------------------------

def test_memorize_then_recall_and_introspect(skill):
    stored = skill("memorize", {"text": "My sister is called Priya"})
    assert stored.ok and stored.result["action"] == "inserted"
    assert skill("memorize", {"text": "My sister is called Priya"}).result["action"] == "merged"
    found = skill("recall", {"query": "sister Priya", "kinds": ["fact"]}).result["items"]
    assert found[0]["kind"] == "fact" and found[0]["text"] == "My sister is called Priya"
    assert found[0]["id"] == stored.result["fact_id"]
    skill("list", {"operation": "add", "name": "shopping", "items": ["milk"]})
    known = skill("introspect", {}).result
    assert known["person"]["facts"] == ["My sister is called Priya"]
    assert known["person"]["lists"] == [{"name": "shopping", "items": 1}]
    assert "schedule" in {entry["name"] for entry in known["assistant"]["skills"]}


@pytest.mark.parametrize(("name", "arguments", "code"), [
    ("memorize", {"text": "You promised to call", "speaker": "assistant"}, "rejected"),
    ("memorize", {"text": "  "}, "invalid_arguments"),
    ("memorize", {"text": "x", "confidence": 2}, "invalid_arguments"),
    ("recall", {"query": "x", "k": 0}, "invalid_arguments"),
    ("recall", {}, "invalid_arguments"),
    ("introspect", {"about": "everything"}, "invalid_arguments"),
    ("associate", {}, "invalid_arguments"),
    ("forget", {}, "needs_info"),
    ("forget", {"fact_ids": [12345]}, "not_found"),
    ("forget", {"query": "my pet giraffe"}, "not_found"),
])
def test_memory_skills_bad_arguments(skill, db_engine, name, arguments, code):
    result = skill(name, arguments)
    assert not result.ok and result.error["code"] == code
    assert count(db_engine, Fact) == 0


def test_memorize_without_the_embedding_model_is_a_clear_error(skill, db_engine):
    result = skill("memorize", {"text": "I like tea"}, embedder=None)
    assert result.error["code"] == "unavailable" and count(db_engine, Fact) == 0


def test_forget_removes_only_the_matching_fact(skill, worker_context, hash_embedder, db_engine):
    with worker_context.sessions.begin() as session:
        remember_fact(session, hash_embedder, USER, "I live in Paris")
        remember_fact(session, hash_embedder, USER, "I work at Acme")
    result = skill("forget", {"query": "where I live, Paris"})
    assert [fact["text"] for fact in result.result["forgotten"]["facts"]] == ["I live in Paris"]
    with db_engine.connect() as connection:
        assert connection.execute(select(Fact.text)).scalars().all() == ["I work at Acme"]


def test_associate_spreads_from_the_seed(skill, worker_context, hash_embedder):
    with worker_context.sessions.begin() as session:
        for text in ("I run marathons with my sister", "My sister lives in Lisbon", "Lisbon has great coffee"):
            remember_fact(session, hash_embedder, USER, text)
    result = skill("associate", {"concept": "marathons"}).result
    concepts = {entry["concept"]: entry["activation"] for entry in result["associations"]}
    assert result["seeds"] == ["marathon"] and "marathon" not in concepts
    assert concepts["sister"] > concepts["lisbon"] > concepts.get("coffee", 0.0)  # decays with every hop
    assert result["associations"][0]["sources"][0].startswith("fact:")
    unknown = skill("associate", {"concept": "volcanoes"}).result
    assert unknown["associations"] == [] and "nothing in memory" in unknown["note"]
