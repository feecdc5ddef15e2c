"""Lists, reminders, scheduled prompts, goals, thoughts and autobiographies travel with the person.

Export, import (idempotent), forget.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import func, select

from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.bundle import BundleInvalid, import_bundle
from services.cognition.models import Autobiography, DriftGist
from services.memory.forget import forget_user
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_user

pytestmark = pytest.mark.integration

DUE = dt.datetime(2099, 3, 1, 8, 0, tzinfo=dt.UTC)
ALL_ONCE = {"lists": 1, "items": 2, "reminders": 2, "goals": 1, "thoughts": 1, "autobiographies": 1}
NONE = dict.fromkeys(ALL_ONCE, 0)


@pytest.fixture
def owned(worker_context):
    with worker_context.sessions.begin() as session:
        create_user(session, user_id="local")
        shopping = NamedList(user_id="local", name="shopping")
        session.add(shopping)
        session.flush()
        session.add_all([ListItem(list_id=shopping.id, text="eggs", position=0),
                         ListItem(list_id=shopping.id, text="milk", checked=True, position=1)])
        session.add_all([
            ScheduledItem(user_id="local", kind="reminder", text="water the plants", due_at=DUE,
                          timezone="Europe/Berlin", recurrence="FREQ=WEEKLY", status="active"),
            ScheduledItem(user_id="local", kind="prompt", text="summarise my week", due_at=DUE, status="active"),
            Goal(user_id="local", text="learn Spanish", state="active",
                 progress=[{"at": "2026-11-20T10:00:00+00:00", "note": "found a course"}])])
        session.add_all([
            DriftGist(user_id="local", fire_id="drift:2026-11-20T10:00", topic="plants",
                      text="The basil you planted in May should be ready to harvest.", relevance=0.8,
                      seeds=["basil", "garden"], memory_until=DUE, pushed_at=DUE),
            Autobiography(user_id="local", fire_id="autobiography:2026-11-20", episode_ids=[],
                          narrative="Learning Spanish and keeping a small herb garden.", episodes_until=DUE)])


def counts(worker_context, user: str) -> dict[str, int]:
    with worker_context.sessions() as session:
        return {
            "lists": session.scalar(select(func.count()).select_from(NamedList).where(NamedList.user_id == user)),
            "items": session.scalar(select(func.count()).select_from(ListItem).join(NamedList)
                                    .where(NamedList.user_id == user)),
            "reminders": session.scalar(select(func.count()).select_from(ScheduledItem)
                                        .where(ScheduledItem.user_id == user)),
            "goals": session.scalar(select(func.count()).select_from(Goal).where(Goal.user_id == user)),
            "thoughts": session.scalar(select(func.count()).select_from(DriftGist).where(DriftGist.user_id == user)),
            "autobiographies": session.scalar(select(func.count()).select_from(Autobiography)
                                              .where(Autobiography.user_id == user)),
        }


def test_export_holds_lists_reminders_prompts_and_goals(client, owned):
    bundle = client.get("/memory/export").json
    assert bundle["lists"] == [{"name": "shopping", "created_at": bundle["lists"][0]["created_at"], "items": [
        {"text": "eggs", "checked": False, "position": 0}, {"text": "milk", "checked": True, "position": 1}]}]
    reminders = {r["text"]: r for r in bundle["reminders"]}
    assert reminders["water the plants"]["recurrence"] == "FREQ=WEEKLY"
    assert reminders["water the plants"]["timezone"] == "Europe/Berlin"
    assert reminders["summarise my week"]["kind"] == "prompt"
    (goal,) = bundle["goals"]
    assert goal["text"] == "learn Spanish" and goal["progress"][0]["note"] == "found a course"
    (thought,) = bundle["thoughts"]
    assert thought["text"].startswith("The basil") and thought["seeds"] == ["basil", "garden"]
    assert thought["pushed_at"] == DUE.isoformat()
    (story,) = bundle["autobiographies"]
    assert story["narrative"] == "Learning Spanish and keeping a small herb garden."


def test_import_restores_them_once_for_another_user(client, owned, worker_context):
    bundle = json.loads(client.get("/memory/export").data)
    first = import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    again = import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    assert first.owned == {"lists": 1, "list_items": 2, "reminders": 2, "goals": 1,
                           "thoughts": 1, "autobiographies": 1}
    assert again.owned == {"lists": 0, "list_items": 0, "reminders": 0, "goals": 0,
                           "thoughts": 0, "autobiographies": 0}
    assert counts(worker_context, "bob") == ALL_ONCE
    with worker_context.sessions() as session:
        thought = session.scalars(select(DriftGist).where(DriftGist.user_id == "bob")).one()
    assert (thought.topic, thought.relevance, thought.pushed_at) == ("plants", 0.8, DUE)
    with worker_context.sessions() as session:
        plants = session.scalars(select(ScheduledItem).where(ScheduledItem.user_id == "bob",
                                                             ScheduledItem.text == "water the plants")).one()
    assert (plants.due_at, plants.timezone, plants.recurrence) == (DUE, "Europe/Berlin", "FREQ=WEEKLY")
    # Importing back into the exporting user changes nothing either.
    import_bundle(worker_context.sessions, HashEmbedder(), "local", bundle)
    assert counts(worker_context, "local") == ALL_ONCE


@pytest.mark.parametrize(("section", "index", "key", "value", "message"), [
    ("reminders", 1, "kind", "alarm", r"reminders\[1\].kind must be one of reminder, prompt"),
    ("thoughts", 0, "text", " ", r"thoughts\[0\].text must be a non-empty string"),
    ("autobiographies", 0, "narrative", None, r"autobiographies\[0\].narrative must be a non-empty string"),
])
def test_a_bundle_with_a_bad_entry_is_refused_before_anything_is_written(client, owned, worker_context, section,
                                                                        index, key, value, message):
    bundle = json.loads(client.get("/memory/export").data)
    bundle[section][index][key] = value
    with pytest.raises(BundleInvalid, match=message):
        import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    assert counts(worker_context, "bob") == NONE


def test_forget_removes_them_and_only_them(owned, worker_context, real_redis, client):
    bundle = json.loads(client.get("/memory/export").data)
    import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    report = forget_user(worker_context.sessions, real_redis, "local")
    assert report.rows["scheduled_items"] == 2 and report.rows["goals"] == 1 and report.rows["lists"] == 1
    assert counts(worker_context, "local") == NONE
    assert counts(worker_context, "bob") == ALL_ONCE
