"""REST for what the background does: /reminders (the schedule skill's store), /goals, /ops/services,
and the `engram services` command."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from sqlalchemy import func, select

from services.act.models import Goal, ScheduledItem
from services.db import User
from services.periodic.runner import execute
from services.periodic.schedules import ServiceSpec

pytestmark = pytest.mark.integration

ALICE, BOB = "alice-token-123", "bob-token-4567"


def soon(minutes: int = 10) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


@pytest.fixture
def api(settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    """A client for two users with their own tokens."""
    from api import WebDeps, create_app

    secure = replace(settings, api_tokens={ALICE: "alice", BOB: "bob"})
    deps = WebDeps.build(secure)
    app = create_app(secure, deps)
    client = app.test_client()

    def call(method: str, path: str, token: str = ALICE, **kwargs):  # type: ignore[no-untyped-def]
        return client.open(path, method=method, headers={"Authorization": f"Bearer {token}"}, **kwargs)

    yield call
    deps.fanout.stop()
    deps.engine.dispose()


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def count(db_engine) -> int:  # type: ignore[no-untyped-def]
    with db_engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(ScheduledItem)).scalar_one())


def test_create_list_edit_and_delete_a_reminder(api, db_engine):
    due = soon()
    created = api("POST", "/reminders", json={"text": "stretch", "due_at": due, "recurrence": "daily"})
    assert created.status_code == 201
    body = created.json
    assert body["id"] > 0 and body["text"] == "stretch" and body["status"] == "active"
    assert _instant(body["due_at"]) == _instant(due)
    assert body["recurrence"] == "FREQ=DAILY" and body["timezone"] == "UTC"
    assert [r["id"] for r in api("GET", "/reminders").json["reminders"]] == [body["id"]]
    moved = api("PATCH", f"/reminders/{body['id']}", json={"due_at": soon(60), "recurrence": None})
    assert moved.status_code == 200 and moved.json["recurrence"] is None
    cancelled = api("PATCH", f"/reminders/{body['id']}", json={"status": "cancelled"})
    assert cancelled.json["status"] == "cancelled"
    assert api("GET", "/reminders").json["reminders"] == []
    assert len(api("GET", "/reminders?status=all").json["reminders"]) == 1
    assert api("DELETE", f"/reminders/{body['id']}").json == {"deleted": body["id"]}
    assert count(db_engine) == 0


def test_an_offset_is_kept_as_the_same_instant_and_the_zone_follows_the_person(api, db_engine):
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert().values(id="alice", timezone="Europe/Berlin"))
    local = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).astimezone(dt.timezone(dt.timedelta(hours=1)))
    created = api("POST", "/reminders", json={"text": "call the bank", "due_at": local.isoformat()}).json
    assert created["timezone"] == "Europe/Berlin"
    assert _instant(created["due_at"]) == local


@pytest.mark.parametrize(("body", "reason"), [
    ({"text": "x", "due_at": "2026-11-23T09:00:00"}, "has no offset"),
    ({"text": "x", "due_at": "tomorrow at nine"}, "not an ISO 8601 time"),
    ({"text": "x", "due_at": "2001-01-01T09:00:00Z"}, "is in the past"),
    ({"text": "x"}, "'due_at' must be an ISO 8601 time"),
    ({"text": "  ", "due_at": "2099-01-01T09:00:00Z"}, "'text' must be a non-empty string"),
    ({"text": "x", "due_at": "2099-01-01T09:00:00Z", "recurrence": "sometimes"}, "'recurrence'"),
    ({"text": "x", "due_at": "2099-01-01T09:00:00Z", "kind": "alarm"}, "'kind'"),
    ({"text": "x", "due_at": "2099-01-01T09:00:00Z", "timezone": "Mars/Olympus"}, "IANA time zone"),
    ({"text": "x", "due_at": "2099-01-01T09:00:00Z", "when": "now"}, "unknown field"),
])
def test_a_bad_reminder_is_a_400_that_says_why_and_stores_nothing(api, db_engine, body, reason):
    response = api("POST", "/reminders", json=body)
    assert response.status_code == 400, response.json
    assert reason in response.json["error"]["message"]
    assert count(db_engine) == 0


def test_wrong_content_type_is_415(api, db_engine):
    response = api("POST", "/reminders", data="text=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415 and count(db_engine) == 0


def test_another_users_reminder_looks_missing(api, db_engine):
    item = api("POST", "/reminders", json={"text": "secret", "due_at": soon()}).json["id"]
    assert api("GET", f"/reminders/{item}", token=BOB).status_code == 404
    assert api("PATCH", f"/reminders/{item}", token=BOB, json={"text": "mine now"}).status_code == 404
    assert api("DELETE", f"/reminders/{item}", token=BOB).status_code == 404
    assert api("GET", "/reminders", token=BOB).json["reminders"] == []
    assert api("GET", f"/reminders/{item}").json["text"] == "secret"
    assert api("GET", "/reminders", token="nope-nope-nope").status_code == 401


def test_goals_are_listed_per_person(api, db_engine):
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert(), [{"id": "alice"}, {"id": "bob"}])
        connection.execute(Goal.__table__.insert(), [
            {"user_id": "alice", "text": "learn Spanish", "state": "active",
             "progress": [{"at": "2026-11-23T09:00:00+00:00", "note": "found a course"}]},
            {"user_id": "bob", "text": "run a marathon", "state": "active", "progress": []}])
    goals = api("GET", "/goals").json["goals"]
    assert [(g["text"], g["progress"][0]["note"]) for g in goals] == [("learn Spanish", "found a course")]
    assert [g["text"] for g in api("GET", "/goals", token=BOB).json["goals"]] == ["run a marathon"]


def test_ops_services_lists_every_service_with_its_last_run(api, worker_context):
    spec = ServiceSpec(name="reminders", queue="periodic-queue", job="services.periodic.reminders.run", every_s=60)
    execute(worker_context, spec, "reminders@test")
    rows = {row["name"]: row for row in api("GET", "/ops/services").json}
    assert {"reminders", "thread_expiry", "experience", "goals", "drift", "autobiography"} <= set(rows)
    reminders = rows["reminders"]
    assert set(reminders) >= {"name", "schedule", "enabled", "queue", "last_run_at", "last_outcome", "last_reason",
                              "last_duration_ms", "next_run_at"}
    assert (reminders["last_outcome"], reminders["last_reason"]) == ("skipped", "nothing due")
    assert reminders["next_run_at"] is not None and reminders["schedule"] == "every 60s"
    assert rows["drift"]["enabled"] is True and rows["drift"]["next_run_at"] is not None  # shipped on
    assert api("GET", "/ops/services", token="nope-nope-nope").status_code == 401


def test_ops_services_shows_a_disabled_service_without_a_next_run(settings, db_engine, real_redis, tmp_path):
    from api import WebDeps, create_app

    shipped = (settings.configs_dir / "schedules.toml").read_text()
    switched_off = shipped.replace('job = "services.cognition.drift.run"\nenabled = true',
                                   'job = "services.cognition.drift.run"\nenabled = false')
    assert switched_off != shipped
    (tmp_path / "schedules.toml").write_text(switched_off)
    secure = replace(settings, api_tokens={ALICE: "alice"}, schedules_file=tmp_path / "schedules.toml")
    deps = WebDeps.build(secure)
    try:
        response = create_app(secure, deps).test_client().get("/ops/services",
                                                              headers={"Authorization": f"Bearer {ALICE}"})
    finally:
        deps.fanout.stop()
        deps.engine.dispose()
    rows = {row["name"]: row for row in response.json}
    assert rows["drift"]["enabled"] is False and rows["drift"]["next_run_at"] is None
    assert rows["reminders"]["enabled"] is True and rows["reminders"]["next_run_at"] is not None


def test_engram_services_lists_and_refuses_an_unknown_name(settings, worker_context, capsys):
    import consumer
    from cli.services import cmd_services

    class Args:
        action, name, json, wait = "list", None, True, 5

    assert cmd_services(settings, Args()) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed["reminders"]["schedule"] == "every 60s" and listed["reminders"]["last_outcome"] is None
    assert consumer.main(["services", "run", "no_such_service"]) == 2
    assert "unknown service 'no_such_service'; services: autobiography" in capsys.readouterr().err


def test_lists_come_in_bounded_pages(api, db_engine, monkeypatch):
    monkeypatch.setattr("api.reminders.MAX_PAGE", 3)  # a page's cap, small enough to fill here
    for n in range(4):
        assert api("POST", "/reminders", json={"text": f"stretch {n}", "due_at": soon(10 + n)}).status_code == 201
    with db_engine.begin() as connection:
        connection.execute(Goal.__table__.insert(), [{"user_id": "alice", "text": f"goal {n}", "state": "active",
                                                      "progress": []} for n in range(4)])
    first = api("GET", "/reminders").json
    assert [r["text"] for r in first["reminders"]] == ["stretch 0", "stretch 1", "stretch 2"] and first["has_more"]
    rest = api("GET", "/reminders?offset=3").json
    assert [r["text"] for r in rest["reminders"]] == ["stretch 3"] and not rest["has_more"]
    assert len(api("GET", "/goals").json["goals"]) == 3 and api("GET", "/goals").json["has_more"]
    page = api("GET", "/goals?limit=2&offset=2").json
    assert len(page["goals"]) == 2 and (page["limit"], page["offset"], page["has_more"]) == (2, 2, False)
    for path in ("/reminders?limit=4", "/reminders?limit=0", "/reminders?offset=-1", "/reminders?offset=100001",
                 "/goals?limit=4", "/goals?state=everything", "/goals?offset=x"):
        response = api("GET", path)
        assert response.status_code == 400 and response.json["error"]["message"], path
