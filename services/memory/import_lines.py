"""The import file's format: JSON lines parsed and grouped into the exchanges ``importer`` stores.

Input: JSON lines ``{"session", "speaker" | "role", "text", "timestamp", "external_id"?}``. A user
line followed by assistant line(s) of the same session becomes one exchange (consecutive user
lines join). With named speakers instead of roles, a session's first speaker takes the user's
side and every line keeps its speaker's name ("Caroline: ..."), so names are searchable.

An exchange's key is the external_id of its first line, else a hash of session, speaker, text
and timestamp.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from services.storable import unstorable_reason

USER_SIDE = {"user", "human", "me", "person", "customer"}
ASSISTANT_SIDE = {"assistant", "ai", "bot", "gpt", "model", "engram", "agent"}
IMPORT_MODE = "IMPORT"
MAX_TEXT = 20_000


@dataclass(frozen=True)
class Line:
    number: int
    session: str
    speaker: str
    named: bool  # a person's name rather than a role
    text: str
    at: dt.datetime
    external_id: str | None


@dataclass(frozen=True)
class BadLine:
    number: int
    reason: str


@dataclass
class LineRecord:
    """One turn of an exchange: its key (external id; None for a live chat turn), speaker, text and time."""

    key: str | None
    speaker: str
    text: str
    at: dt.datetime


@dataclass
class Record:
    """One exchange to store (``lines`` empty: derived from user_text and reply by the database)."""

    key: str
    thread_key: str
    session_key: str
    user_text: str
    reply: str
    at: dt.datetime
    mode: str = IMPORT_MODE
    topic: str = "imported"
    source: str = "text"
    request_id: str | None = None
    lines: list[LineRecord] = field(default_factory=list)


def digest(*parts: str, size: int = 40) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:size]


def parse_timestamp(value: Any) -> dt.datetime:
    """ISO 8601 (naive → UTC) or unix seconds."""
    if isinstance(value, bool):
        raise ValueError("timestamp must be ISO 8601 text or unix seconds")
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(float(value), dt.UTC)
    if not isinstance(value, str) or not value.strip():
        raise ValueError("missing 'timestamp'")
    parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def parse_line(number: int, raw: str) -> Line:
    """One input line, or ValueError saying what is wrong with it."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    reason = unstorable_reason(data, "the line")
    if reason:
        raise ValueError(reason)
    session = data.get("session")
    if isinstance(session, bool) or not isinstance(session, str | int) or str(session).strip() == "":
        raise ValueError("missing 'session'")
    speaker = data.get("speaker", data.get("role"))
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValueError("missing 'speaker' or 'role'")
    body = data.get("text")
    if not isinstance(body, str) or not body.strip():
        raise ValueError("missing or empty 'text'")
    if len(body) > MAX_TEXT:
        raise ValueError(f"'text' longer than {MAX_TEXT} characters")
    try:
        at = parse_timestamp(data.get("timestamp"))
    except (ValueError, OverflowError, OSError) as exc:
        raise ValueError(f"bad 'timestamp': {exc}") from None
    external_id = data.get("external_id")
    if external_id is not None and (not isinstance(external_id, str | int) or len(str(external_id)) > 200):
        raise ValueError("'external_id' must be a string of at most 200 characters")
    role = speaker.strip().lower()
    if role == "system":
        raise ValueError("system lines are not part of a conversation")
    named = role not in USER_SIDE | ASSISTANT_SIDE
    return Line(number, str(session), speaker.strip(), named, body.strip(), at,
                None if external_id is None else str(external_id))


def parse_lines(lines: Iterable[str]) -> tuple[list[Line], list[BadLine], int]:
    """Good lines, bad lines (with their 1-based numbers) and the count of non-blank lines."""
    good, bad, seen = [], [], 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        seen += 1
        try:
            good.append(parse_line(number, raw))
        except ValueError as exc:
            bad.append(BadLine(number, str(exc)))
    return good, bad, seen


def pair_exchanges(lines: list[Line]) -> list[Record]:
    """Group lines into exchanges per session, in file order; each exchange keeps its lines."""
    records: list[Record] = []
    open_by_session: dict[str, Record] = {}
    first_named: dict[str, str] = {}
    for line in lines:
        user_side = _user_side(line, first_named)
        content = f"{line.speaker}: {line.text}" if line.named else line.text
        key = line.external_id or "h:" + digest(line.session, line.speaker, line.text, line.at.isoformat())
        turn = LineRecord(key, line.speaker if line.named else ("user" if user_side else "assistant"), line.text,
                          line.at)
        current = open_by_session.get(line.session)
        if user_side and current is not None and not current.reply:
            current.user_text += "\n" + content  # the person kept talking before any answer
            current.lines.append(turn)
            continue
        if user_side or current is None:
            current = Record(key=key, thread_key=line.session, session_key=line.session,
                             user_text=content if user_side else "", reply="" if user_side else content, at=line.at,
                             lines=[turn])
            records.append(current)
            open_by_session[line.session] = current
            continue
        current.reply = f"{current.reply}\n{content}" if current.reply else content
        current.lines.append(turn)
    return records


def _user_side(line: Line, first_named: dict[str, str]) -> bool:
    if not line.named:
        return line.speaker.lower() in USER_SIDE
    first = first_named.setdefault(line.session, line.speaker)
    return line.speaker == first
