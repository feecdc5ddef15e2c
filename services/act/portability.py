"""What the person keeps besides memory — lists, reminders, scheduled prompts, goals — in the export bundle.

Rows carry no database ids in the bundle; on import an item is matched by its content and
creation time (a list by its name, an item by its text within the list), so importing the same
bundle twice stores nothing twice, and a bundle from another user or database lands as new rows.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.act.models import GOAL_STATES, SCHEDULE_KINDS, SCHEDULE_STATUSES, Goal, ListItem, NamedList, ScheduledItem
from services.act.recurrence import RecurrenceError, normalize_rule
from services.db import insert
from services.memory.models import from_iso, iso

SECTIONS = {"lists": ("name",), "reminders": ("kind", "text", "due_at"), "goals": ("text",)}
TIME_KEYS = ("due_at", "fired_at")


def export_owned(session: Session, user_id: str) -> dict[str, list[dict[str, Any]]]:
    """The user's lists (with items), scheduled items and goals, JSON-ready."""
    lists = session.scalars(select(NamedList).where(NamedList.user_id == user_id).order_by(NamedList.name)).all()
    items = {row.id: [] for row in lists}  # type: dict[int, list[ListItem]]
    if items:
        for item in session.scalars(select(ListItem).where(ListItem.list_id.in_(list(items)))
                                    .order_by(ListItem.position, ListItem.id)):
            items[item.list_id].append(item)
    return {
        "lists": [{"name": row.name, "created_at": iso(row.created_at),
                   "items": [{"text": i.text, "checked": i.checked, "position": i.position} for i in items[row.id]]}
                  for row in lists],
        "reminders": [{"kind": r.kind, "text": r.text, "due_at": iso(r.due_at), "timezone": r.timezone,
                       "recurrence": r.recurrence, "status": r.status, "fired_at": iso(r.fired_at),
                       "created_at": iso(r.created_at)}
                      for r in session.scalars(select(ScheduledItem).where(ScheduledItem.user_id == user_id)
                                               .order_by(ScheduledItem.id))],
        "goals": [{"text": g.text, "state": g.state, "progress": list(g.progress or []),
                   "created_at": iso(g.created_at), "updated_at": iso(g.updated_at)}
                  for g in session.scalars(select(Goal).where(Goal.user_id == user_id).order_by(Goal.id))],
    }


def check_owned(section: str, index: int, item: dict[str, Any]) -> str | None:
    """The first problem of a lists/reminders/goals entry that import would trip over, or None."""
    where = f"{section}[{index}]"
    if section == "reminders":
        if item.get("kind") not in SCHEDULE_KINDS:
            return f"{where}.kind must be one of {', '.join(SCHEDULE_KINDS)}"
        if item.get("status", "active") not in SCHEDULE_STATUSES:
            return f"{where}.status must be one of {', '.join(SCHEDULE_STATUSES)}"
        if item.get("recurrence"):
            try:
                normalize_rule(str(item["recurrence"]))
            except RecurrenceError as exc:
                return f"{where}.recurrence: {exc}"
    if section == "goals" and item.get("state", "active") not in GOAL_STATES:
        return f"{where}.state must be one of {', '.join(GOAL_STATES)}"
    if section == "lists" and not isinstance(item.get("items", []), list):
        return f"{where}.items must be a list"
    text_key = "name" if section == "lists" else "text"
    if not isinstance(item.get(text_key), str) or not item[text_key].strip():
        return f"{where}.{text_key} must be a non-empty string"
    return None


def import_owned(session: Session, user_id: str, bundle: dict[str, Any]) -> dict[str, int]:
    """Restore the sections for ``user_id``; returns how many rows each added (0 on a repeat)."""
    lists, items = _import_lists(session, user_id, bundle.get("lists", []))
    return {"lists": lists, "list_items": items,
            "reminders": _import_reminders(session, user_id, bundle.get("reminders", [])),
            "goals": _import_goals(session, user_id, bundle.get("goals", []))}


def _import_lists(session: Session, user_id: str, lists: list[dict[str, Any]]) -> tuple[int, int]:
    created = added = 0
    for entry in lists:
        name = entry["name"].strip().lower()
        created += session.execute(insert(NamedList).values(user_id=user_id, name=name).on_conflict_do_nothing(
            constraint="uq_lists_user_name").returning(NamedList.id)).first() is not None
        target = session.scalars(select(NamedList).where(NamedList.user_id == user_id,
                                                         NamedList.name == name)).one()
        present = set(session.scalars(select(ListItem.text).where(ListItem.list_id == target.id)))
        for position, item in enumerate(entry.get("items", [])):
            text = str(item.get("text", "")).strip()
            if text and text not in present:
                session.add(ListItem(list_id=target.id, text=text, checked=bool(item.get("checked")),
                                     position=int(item.get("position", position))))
                present.add(text)
                added += 1
    session.flush()
    return created, added


def _import_reminders(session: Session, user_id: str, reminders: list[dict[str, Any]]) -> int:
    added = 0
    for entry in reminders:
        created = from_iso(entry.get("created_at"))
        if _exists(session, ScheduledItem, user_id, entry["text"], created, ScheduledItem.kind == entry["kind"]):
            continue
        session.add(ScheduledItem(
            user_id=user_id, kind=entry["kind"], text=entry["text"], due_at=from_iso(entry["due_at"]),
            timezone=entry.get("timezone") or "UTC",
            recurrence=normalize_rule(entry["recurrence"]) if entry.get("recurrence") else None,
            status=entry.get("status", "active"), fired_at=from_iso(entry.get("fired_at")),
            **({"created_at": created} if created else {})))
        added += 1
    session.flush()
    return added


def _import_goals(session: Session, user_id: str, goals: list[dict[str, Any]]) -> int:
    added = 0
    for entry in goals:
        created = from_iso(entry.get("created_at"))
        if _exists(session, Goal, user_id, entry["text"], created):
            continue
        times = {key: from_iso(entry.get(key)) for key in ("created_at", "updated_at") if entry.get(key)}
        session.add(Goal(user_id=user_id, text=entry["text"], state=entry.get("state", "active"),
                         progress=list(entry.get("progress") or []), **times))
        added += 1
    session.flush()
    return added


def _exists(session: Session, model: Any, user_id: str, text: str, created: dt.datetime | None, *more: Any) -> bool:
    query = select(model.id).where(model.user_id == user_id, model.text == text, *more)
    if created is not None:
        query = query.where(model.created_at == created)
    return session.scalars(query.limit(1)).first() is not None
