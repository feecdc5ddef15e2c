"""Table models of the ACT skills: scheduled items, named lists, goals (schema in migration 0004), and shared counts."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint, func, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, Session, mapped_column

from services.db import Base

SCHEDULE_KINDS = ("reminder", "prompt")
SCHEDULE_STATUSES = ("active", "done", "cancelled")
GOAL_STATES = ("active", "paused", "done", "abandoned")


class ScheduledItem(Base):
    """A reminder (told to the person) or a scheduled prompt (run as a turn) due at a UTC instant."""

    __tablename__ = "scheduled_items"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16), default="reminder")
    text: Mapped[str] = mapped_column(Text)
    due_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    recurrence: Mapped[str | None] = mapped_column(String(200), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    created_request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    fired_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The firing service's claim (migration 0005): which run is delivering the due occurrence, since when,
    # and a scheduled prompt's reply kept until it is delivered (services/periodic/reminders.py).
    fire_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    claimed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    pending_reply: Mapped[str | None] = mapped_column(Text, nullable=True)
    fire_count: Mapped[int] = mapped_column(Integer, default=0)


class NamedList(Base):
    """A person's named list (shopping, packing, to-do); names are unique per person, stored lower-case."""

    __tablename__ = "lists"
    # The unique constraint's leading column also serves lookups by user_id: no separate index.
    __table_args__ = (UniqueConstraint("user_id", "name", name="uq_lists_user_name"),)
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ListItem(Base):
    __tablename__ = "list_items"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    list_id: Mapped[int] = mapped_column(ForeignKey("lists.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    checked: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Goal(Base):
    """A goal to pursue in the background; ``progress`` is a list of ``{"at", "note"}`` entries."""

    __tablename__ = "goals"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), default="active")
    progress: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    created_request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


def list_counts(session: Session, user_id: str) -> list[tuple[str, int]]:
    """The person's lists as ``(name, item count)``, by name."""
    rows = session.execute(
        select(NamedList.name, func.count(ListItem.id)).outerjoin(ListItem, ListItem.list_id == NamedList.id)
        .where(NamedList.user_id == user_id).group_by(NamedList.name).order_by(NamedList.name)
    ).all()
    return [(name, count) for name, count in rows]


def list_holding(session: Session, user_id: str, item: str) -> str | None:
    """The name of the one list of the person's with an open item holding ``item``'s words ("headphones" is on the
    "christmas gift" list as "headphones for Nikos"); None when no list or several do."""
    needle = " ".join(item.lower().split())
    names = session.scalars(
        select(NamedList.name).join(ListItem, ListItem.list_id == NamedList.id)
        .where(NamedList.user_id == user_id, ListItem.checked.is_(False),
               func.strpos(func.lower(ListItem.text), needle) > 0).distinct().limit(2)).all()
    return names[0] if len(names) == 1 else None


def active_reminder_count(session: Session, user_id: str) -> int:
    """How many reminders and scheduled prompts of the person are still active."""
    query = select(func.count()).where(ScheduledItem.user_id == user_id, ScheduledItem.status == "active")
    return int(session.scalar(query) or 0)


__all__ = ["GOAL_STATES", "SCHEDULE_KINDS", "SCHEDULE_STATUSES", "Goal", "ListItem", "NamedList", "ScheduledItem",
           "active_reminder_count", "list_counts"]
