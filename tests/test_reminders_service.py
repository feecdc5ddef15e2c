"""Reminder and scheduled-prompt firing with a controllable clock: exactly once, per owner, recurring in
the person's zone across DST, scheduled prompts through a narrowed ACT loop."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from services.act.models import ScheduledItem
from services.db import User
from services.periodic import reminders
from services.service_call import ServiceCall
from services.streams import EventLog, user_channel
from tests.llm_steps import Json, Reply

pytestmark = pytest.mark.integration

UTC = dt.UTC
T0 = dt.datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


@pytest.fixture
def people(db_engine):
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert(), [{"id": "ada", "timezone": "Europe/Berlin"},
                                                     {"id": "bob", "timezone": "UTC"}])


@pytest.fixture
def fire(worker_context, people):
    """Run the service as the runner would, at the given instant."""

    def run(at: dt.datetime):  # type: ignore[no-untyped-def]
        return reminders.run(ServiceCall("reminders", f"reminders@{at:%H%M%S}", worker_context, clock=lambda: at))

    return run


def add(worker_context, *, user="ada", text="stretch", due=T0, kind="reminder", recurrence=None,
        zone="Europe/Berlin", **extra) -> int:  # type: ignore[no-untyped-def]
    with worker_context.sessions.begin() as session:
        item = ScheduledItem(user_id=user, kind=kind, text=text, due_at=due, timezone=zone, recurrence=recurrence,
                             status="active", **extra)
        session.add(item)
        session.flush()
        return item.id


def stream(real_redis, user: str):  # type: ignore[no-untyped-def]
    return EventLog(real_redis).read_after(user_channel(user), None)


def item(worker_context, item_id: int) -> ScheduledItem:
    with worker_context.sessions() as session:
        return session.get(ScheduledItem, item_id)


def test_a_due_reminder_reaches_its_owner_once_and_nobody_else(fire, worker_context, real_redis):
    item_id = add(worker_context)
    assert fire(T0 - dt.timedelta(seconds=30)).reason == "nothing due"
    result = fire(T0 + dt.timedelta(seconds=5))
    assert result.outcome == "ran" and result.details["reminders"] == 1
    assert fire(T0 + dt.timedelta(minutes=1)).reason == "nothing due"
    events = stream(real_redis, "ada")
    assert [(e.event, e.data) for e in events] == [
        ("reminder", {"id": item_id, "text": "stretch", "due_at": "2026-11-23T09:00:00Z", "kind": "reminder"})]
    assert stream(real_redis, "bob") == []
    stored = item(worker_context, item_id)
    assert (stored.status, stored.fire_count, stored.fire_token) == ("done", 1, None)


def test_a_crash_between_publish_and_mark_neither_repeats_nor_loses_the_reminder(
        fire, worker_context, real_redis, monkeypatch):
    item_id = add(worker_context)
    real_mark = reminders.mark_fired

    def crash(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ConnectionError("the worker died after publishing")

    monkeypatch.setattr(reminders, "mark_fired", crash)
    assert fire(T0).outcome == "failed"
    monkeypatch.setattr(reminders, "mark_fired", real_mark)
    # Within the claim's lease nobody touches it; after the lease a new run takes over and marks it.
    assert fire(T0 + dt.timedelta(minutes=1)).reason == "nothing due"
    assert fire(T0 + dt.timedelta(seconds=reminders.CLAIM_LEASE_S + 60)).outcome == "ran"
    assert fire(T0 + dt.timedelta(seconds=reminders.CLAIM_LEASE_S * 3)).reason == "nothing due"
    assert [e.data["id"] for e in stream(real_redis, "ada")] == [item_id]
    assert item(worker_context, item_id).status == "done"


def test_a_crash_between_claim_and_publish_still_delivers_after_the_lease(fire, worker_context, real_redis):
    item_id = add(worker_context)
    assert len(reminders.claim_due(worker_context.sessions, T0, "dead-run", 10)) == 1  # ... and the run died
    assert fire(T0 + dt.timedelta(minutes=2)).reason == "nothing due"
    assert fire(T0 + dt.timedelta(seconds=reminders.CLAIM_LEASE_S + 1)).details["reminders"] == 1
    assert [e.data["id"] for e in stream(real_redis, "ada")] == [item_id]


def test_every_day_at_nine_stays_at_nine_local_across_the_spring_dst_change(fire, worker_context, real_redis):
    first = dt.datetime(2026, 3, 28, 8, 0, tzinfo=UTC)  # 09:00 CET, the day before clocks go forward
    item_id = add(worker_context, due=first, recurrence="FREQ=DAILY")
    fire(first)
    after_change = item(worker_context, item_id)
    assert after_change.status == "active"
    assert after_change.due_at == dt.datetime(2026, 3, 29, 7, 0, tzinfo=UTC)  # 09:00 CEST
    fire(after_change.due_at + dt.timedelta(seconds=1))
    assert item(worker_context, item_id).due_at == dt.datetime(2026, 3, 30, 7, 0, tzinfo=UTC)
    assert [e.data["due_at"] for e in stream(real_redis, "ada")] == ["2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z"]


def test_occurrences_missed_while_down_fire_once_then_the_next_one_after_now(fire, worker_context, real_redis):
    item_id = add(worker_context, due=T0 - dt.timedelta(days=3), recurrence="FREQ=DAILY")
    fire(T0 + dt.timedelta(minutes=30))
    assert len(stream(real_redis, "ada")) == 1
    assert item(worker_context, item_id).due_at == T0 + dt.timedelta(days=1)


def test_a_scheduled_prompt_runs_through_act_without_schedule_or_goal_and_its_reply_is_pushed(
        fire, worker_context, real_redis, fake_llm):
    fake_llm.script(Json({"actions": []}), Reply("You have nothing planned today."))
    item_id = add(worker_context, kind="prompt", text="What is on my agenda today?")
    result = fire(T0)
    assert result.details["prompts"] == 1
    (event,) = stream(real_redis, "ada")
    assert event.data == {"id": item_id, "text": "What is on my agenda today?", "due_at": "2026-11-23T09:00:00Z",
                          "kind": "scheduled_prompt", "reply": "You have nothing planned today."}
    tools = {tool["function"]["name"] for tool in fake_llm.requests[0]["tools"]}
    assert "recall" in tools and not tools & {"schedule", "goal", "forget"}
    calls = len(fake_llm.requests)
    fire(T0 + dt.timedelta(minutes=1))
    assert len(fake_llm.requests) == calls and len(stream(real_redis, "ada")) == 1


def test_a_prompt_answered_before_a_crash_is_delivered_without_acting_again(fire, worker_context, real_redis,
                                                                            fake_llm):
    item_id = add(worker_context, kind="prompt", text="Summarise my week", fire_token="dead-run",
                  claimed_at=T0, pending_reply="A calm week.")
    fire(T0 + dt.timedelta(seconds=reminders.CLAIM_LEASE_S + 1))
    assert fake_llm.requests == []
    assert [e.data.get("reply") for e in stream(real_redis, "ada")] == ["A calm week."]
    assert item(worker_context, item_id).pending_reply is None


def test_a_reminder_moved_while_it_was_firing_keeps_the_new_time(fire, worker_context, real_redis):
    item_id = add(worker_context)
    claimed = reminders.claim_due(worker_context.sessions, T0, "run-1", 10)
    later = T0 + dt.timedelta(hours=2)
    with worker_context.sessions.begin() as session:
        session.get(ScheduledItem, item_id).due_at = later  # PATCH /reminders while the run was publishing
    reminders.mark_fired(worker_context.sessions, claimed[0], "run-1", T0)
    stored = item(worker_context, item_id)
    assert (stored.status, stored.due_at, stored.fire_token) == ("active", later, None)


def test_other_users_items_are_untouched_by_a_users_firing(fire, worker_context, real_redis):
    add(worker_context, user="bob", text="call mum", zone="UTC", due=T0 + dt.timedelta(hours=1))
    ada = add(worker_context)
    fire(T0)
    assert [e.data["id"] for e in stream(real_redis, "ada")] == [ada]
    assert stream(real_redis, "bob") == []
    with worker_context.sessions() as session:
        assert session.scalars(select(ScheduledItem.status).where(ScheduledItem.user_id == "bob")).all() == ["active"]


def test_publish_once_appends_one_event_per_key_and_returns_its_id(real_redis):
    log = EventLog(real_redis)
    first = log.publish_once(user_channel("ada"), "reminder", {"id": 1}, "reminder:1:x")
    again = log.publish_once(user_channel("ada"), "reminder", {"id": 1}, "reminder:1:x")
    other = log.publish_once(user_channel("ada"), "reminder", {"id": 1}, "reminder:1:y")
    assert first[1] and not again[1] and other[1] and again[0] == first[0]
    assert [e.id for e in log.read_after(user_channel("ada"), None)] == [first[0], other[0]]
