"""Reminders and scheduled prompts as the REST API and the export see them.

The same rows the ``schedule`` skill writes (``scheduled_items``); here they are created and
edited from exact instants (ISO 8601 with an offset) instead of the model's phrases. Every
check raises ``ReminderInvalid`` with the reason, before anything is written.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.act.models import SCHEDULE_KINDS, ScheduledItem
from services.act.recurrence import RecurrenceError, next_occurrence, normalize_rule
from services.db import User, insert
from services.zones import user_zone, zone_of

MAX_TEXT = 500
PAST_SLACK = dt.timedelta(seconds=60)


class ReminderInvalid(ValueError):
    """A reminder field that cannot be stored; the message says why."""


def parse_instant(raw: Any, now: dt.datetime) -> dt.datetime:
    """An ISO 8601 instant with an offset or Z, not in the past, as UTC."""
    if not isinstance(raw, str) or not raw.strip():
        raise ReminderInvalid("'due_at' must be an ISO 8601 time such as 2026-11-23T09:00:00+01:00")
    try:
        parsed = dt.datetime.fromisoformat(raw.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise ReminderInvalid(f"'due_at' is not an ISO 8601 time: {raw!r} (example: 2026-11-23T09:00:00Z)") from None
    if parsed.tzinfo is None:
        raise ReminderInvalid(f"'due_at' {raw!r} has no offset: add Z (UTC) or one like +01:00")
    if parsed < now - PAST_SLACK:
        raise ReminderInvalid(f"'due_at' {raw!r} is in the past (now is {now.isoformat(timespec='seconds')})")
    return parsed.astimezone(dt.UTC)


def parse_text(raw: Any) -> str:
    text = " ".join(str(raw).split()) if isinstance(raw, str) else ""
    if not text:
        raise ReminderInvalid("'text' must be a non-empty string")
    if len(text) > MAX_TEXT:
        raise ReminderInvalid(f"'text' is longer than {MAX_TEXT} characters")
    return text


def parse_zone(raw: Any) -> str:
    try:
        ZoneInfo(str(raw))
    except (ZoneInfoNotFoundError, ValueError):
        raise ReminderInvalid(f"'timezone' {raw!r} is not an IANA time zone such as Europe/Berlin") from None
    return str(raw)


def parse_recurrence(raw: Any, due: dt.datetime, zone_name: str) -> str | None:
    """The canonical rule, or None for no repeat; refuses rules that never fire after ``due``."""
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in ("", "none", "once", "never")):
        return None
    if not isinstance(raw, str):
        raise ReminderInvalid("'recurrence' must be a string such as \"daily\" or \"FREQ=WEEKLY;BYDAY=MO\"")
    try:
        rule = normalize_rule(raw)
        zone = zone_of(zone_name)
        following = next_occurrence(rule, due.astimezone(zone), due, zone)
    except RecurrenceError as exc:
        raise ReminderInvalid(f"'recurrence': {exc}") from None
    if following is None:
        raise ReminderInvalid(f"'recurrence' {rule} never repeats after the first time")
    return rule


def ensure_user(session: Session, user_id: str) -> None:
    session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())


def create(session: Session, user_id: str, body: dict[str, Any], now: dt.datetime) -> ScheduledItem:
    """A new item from a validated request body (text, due_at, recurrence?, kind?, timezone?)."""
    text = parse_text(body.get("text"))
    due = parse_instant(body.get("due_at"), now)
    kind = body.get("kind", "reminder")
    if kind not in SCHEDULE_KINDS:
        raise ReminderInvalid(f"'kind' must be one of {', '.join(SCHEDULE_KINDS)}")
    ensure_user(session, user_id)
    zone_name = parse_zone(body["timezone"]) if body.get("timezone") else user_zone(session, user_id)
    recurrence = parse_recurrence(body.get("recurrence"), due, zone_name)
    item = ScheduledItem(user_id=user_id, kind=kind, text=text, due_at=due, timezone=zone_name,
                         recurrence=recurrence, status="active", created_at=now, updated_at=now)
    session.add(item)
    session.flush()
    return item


def update_item(item: ScheduledItem, body: dict[str, Any], now: dt.datetime) -> None:
    """Apply a PATCH body; nothing changes unless every field is valid."""
    text = parse_text(body["text"]) if "text" in body else item.text
    due = parse_instant(body["due_at"], now) if "due_at" in body else item.due_at
    zone_name = parse_zone(body["timezone"]) if "timezone" in body else item.timezone
    recurrence = parse_recurrence(body.get("recurrence", item.recurrence), due, zone_name)
    status = body.get("status", item.status)
    if status not in ("active", "cancelled"):
        raise ReminderInvalid("'status' can be set to active or cancelled")
    if status == "active" and item.status != "active" and due < now - PAST_SLACK:
        raise ReminderInvalid("re-activating needs a new 'due_at' in the future")
    item.text, item.due_at, item.timezone, item.recurrence, item.status = text, due, zone_name, recurrence, status
    item.updated_at = now


def owned(session: Session, user_id: str, item_id: int) -> ScheduledItem | None:
    return session.scalars(select(ScheduledItem).where(ScheduledItem.id == item_id,
                                                       ScheduledItem.user_id == user_id)).first()


def listing(session: Session, user_id: str, status: str | None, *, limit: int | None = None,
            offset: int = 0) -> list[ScheduledItem]:
    query = select(ScheduledItem).where(ScheduledItem.user_id == user_id)
    if status is not None:
        query = query.where(ScheduledItem.status == status)
    query = query.order_by(ScheduledItem.due_at, ScheduledItem.id).offset(offset)
    return list(session.scalars(query if limit is None else query.limit(limit)))


def to_dict(item: ScheduledItem) -> dict[str, Any]:
    zone = zone_of(item.timezone)
    return {"id": item.id, "kind": item.kind, "text": item.text, "due_at": utc_text(item.due_at),
            "due_local": item.due_at.astimezone(zone).isoformat(timespec="minutes"), "timezone": item.timezone,
            "recurrence": item.recurrence, "status": item.status,
            "fired_at": utc_text(item.fired_at) if item.fired_at else None, "fire_count": item.fire_count or 0,
            "created_at": utc_text(item.created_at) if item.created_at else None}


def utc_text(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
