"""A person's time zone by name: reminders, quiet hours and recurrences all read it the same way."""

from __future__ import annotations

from datetime import UTC, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def zone_of(name: str | None) -> tzinfo:
    """The IANA zone, or UTC for an empty / unknown name."""
    try:
        return ZoneInfo(name) if name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC
