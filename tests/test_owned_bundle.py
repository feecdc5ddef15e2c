"""Lists, reminders, scheduled prompts and goals travel with the person: export, import (idempotent), forget."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import func, select

from services.act.models import Goal, ListItem, NamedList, ScheduledItem
from services.embeddings import HashEmbedder
from services.memory.bundle import BundleInvalid, import_bundle
from services.memory.forget import forget_user
from tests.memory_builders import create_user

pytestmark = pytest.mark.integration

DUE = dt.datetime(2099, 3, 1, 8, 0, tzinfo=dt.UTC)


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


def counts(worker_context, user: str) -> dict[str, int]:
    with worker_context.sessions() as session:
        return {
            "lists": session.scalar(select(func.count()).select_from(NamedList).where(NamedList.user_id == user)),
            "items": session.scalar(select(func.count()).select_from(ListItem).join(NamedList)
                                    .where(NamedList.user_id == user)),
            "reminders": session.scalar(select(func.count()).select_from(ScheduledItem)
                                        .where(ScheduledItem.user_id == user)),
            "goals": session.scalar(select(func.count()).select_from(Goal).where(Goal.user_id == user)),
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


def test_import_restores_them_once_for_another_user(client, owned, worker_context):
    bundle = json.loads(client.get("/memory/export").data)
    first = import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    again = import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    assert first.owned == {"lists": 1, "list_items": 2, "reminders": 2, "goals": 1}
    assert again.owned == {"lists": 0, "list_items": 0, "reminders": 0, "goals": 0}
    assert counts(worker_context, "bob") == {"lists": 1, "items": 2, "reminders": 2, "goals": 1}
    with worker_context.sessions() as session:
        plants = session.scalars(select(ScheduledItem).where(ScheduledItem.user_id == "bob",
                                                             ScheduledItem.text == "water the plants")).one()
    assert (plants.due_at, plants.timezone, plants.recurrence) == (DUE, "Europe/Berlin", "FREQ=WEEKLY")
    # Importing back into the exporting user changes nothing either.
    import_bundle(worker_context.sessions, HashEmbedder(), "local", bundle)
    assert counts(worker_context, "local") == {"lists": 1, "items": 2, "reminders": 2, "goals": 1}


def test_a_bundle_with_a_bad_reminder_is_refused_before_anything_is_written(client, owned, worker_context):
    bundle = json.loads(client.get("/memory/export").data)
    bundle["reminders"][1]["kind"] = "alarm"
    with pytest.raises(BundleInvalid, match=r"reminders\[1\].kind must be one of reminder, prompt"):
        import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    assert counts(worker_context, "bob") == {"lists": 0, "items": 0, "reminders": 0, "goals": 0}


def test_forget_removes_them_and_only_them(owned, worker_context, real_redis, client):
    bundle = json.loads(client.get("/memory/export").data)
    import_bundle(worker_context.sessions, HashEmbedder(), "bob", bundle)
    report = forget_user(worker_context.sessions, real_redis, "local")
    assert report.rows["scheduled_items"] == 2 and report.rows["goals"] == 1 and report.rows["lists"] == 1
    assert counts(worker_context, "local") == {"lists": 0, "items": 0, "reminders": 0, "goals": 0}
    assert counts(worker_context, "bob") == {"lists": 1, "items": 2, "reminders": 2, "goals": 1}
