"""A person's time zone by name: reminders, quiet hours and recurrences all read it the same way."""

from __future__ import annotations

from datetime import UTC, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.orm import Session

from services.db import User


def zone_of(name: str | None) -> tzinfo:
    """The IANA zone, or UTC for an empty / unknown name."""
    try:
        return ZoneInfo(name) if name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def user_zone(session: Session, user_id: str) -> str:
    """The person's zone name as stored ("UTC" when they set none)."""
    user = session.get(User, user_id)
    return user.timezone if user is not None and user.timezone else "UTC"
