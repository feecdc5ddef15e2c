"""What every innate skill is made of: a schema, a handler, and the context it runs in.

Handlers reach PostgreSQL only through ``SkillContext.session``. The first access claims the
digest's open session for this action inside a SAVEPOINT: a handler that fails (or is
abandoned after its timeout) is rolled back to it, so nothing is ever half-written, and the
digest's own transaction stays usable for the exchange.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import Session, SessionTransaction

from services.act.config import ActConfig
from services.memory.config import MemoryConfig

Arguments = dict[str, Any]
Result = dict[str, Any]


class SkillError(Exception):
    """A skill refusing its arguments or its task; becomes a structured error result, not a crash.

    ``code`` is machine-readable (``not_found``, ``invalid``, ``needs_info``, ``ambiguous`` ...);
    ``needs_info`` tells the loop to ask the person for ``missing`` instead of guessing.
    """

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_result(self) -> Result:
        """The structured error the model reads."""
        return {"code": self.code, "message": self.message, **self.details}


class ActionCancelled(Exception):
    """Raised inside an abandoned (timed-out) skill when it touches the session again."""


@dataclass(frozen=True)
class Skill:
    """One innate skill. ``parameters`` is a JSON schema (the dispatcher validates against it)."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[[SkillContext, Arguments], Result]
    # Whether these arguments change something the person would want to be asked about.
    consequential: Callable[[Arguments], bool] = lambda arguments: False
    # Whether they remove or cancel something (the critic wants the person to have said so).
    destructive: Callable[[Arguments], bool] = lambda arguments: False
    # The words the critic checks against what the person actually said.
    subject: Callable[[Arguments], str] = lambda arguments: ""
    # One line for the confirmation question and the compacted trail.
    describe: Callable[[Arguments], str] = lambda arguments: ""
    # Read-only resolution before a confirmation (e.g. which facts "forget" would remove);
    # returns arguments to store with the pending action, plus what to show the person.
    preview: Callable[[SkillContext, Arguments], Result] | None = None
    always_confirm: bool = False

    def tool(self) -> dict[str, Any]:
        """The OpenAI tools entry; argument descriptions stay in the prompt's catalogue, not sent twice."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": _without_descriptions(self.parameters)}}


def _without_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _without_descriptions(value) for key, value in schema.items() if key != "description"}
    if isinstance(schema, list):
        return [_without_descriptions(value) for value in schema]
    return schema


@dataclass
class ActionTicket:
    """One action's claim on the session; the main thread cancels it on timeout."""

    mutex: threading.Lock = field(default_factory=threading.Lock)
    cancelled: bool = False
    claimed: bool = False
    savepoint: SessionTransaction | None = None


class SessionGate:
    """Serialises the digest session between the loop and the (threaded) skill handlers."""

    def __init__(self, session: Session | None, *, claim_wait_s: float = 5.0) -> None:
        self.session = session
        self.claim_wait_s = claim_wait_s
        self._busy = threading.Lock()

    def claim(self, ticket: ActionTicket) -> Session:
        """The session for this action, inside its savepoint (opened on first use)."""
        with ticket.mutex:
            if ticket.cancelled:
                raise ActionCancelled("the action was abandoned after its timeout")
            if self.session is None:
                raise SkillError("unavailable", "no database session in this context")
            if not ticket.claimed:
                if not self._busy.acquire(timeout=self.claim_wait_s):
                    raise ActionCancelled("the session is still held by an abandoned action")
                ticket.claimed = True
                ticket.savepoint = self.session.begin_nested()
            return self.session

    def release(self, ticket: ActionTicket, ok: bool) -> None:
        """End of the action (in its own thread): keep its writes only if it succeeded in time."""
        with ticket.mutex:
            if not ticket.claimed:
                return
            try:
                if ticket.savepoint is not None and ticket.savepoint.is_active:
                    if ok and not ticket.cancelled:
                        ticket.savepoint.commit()
                    else:
                        ticket.savepoint.rollback()
            finally:
                ticket.claimed = False
                self._busy.release()

    def cancel(self, ticket: ActionTicket) -> bool:
        """Abandon an action; True when it never touched the session (so nothing waits on it)."""
        with ticket.mutex:
            ticket.cancelled = True
            return not ticket.claimed

    def settle(self, timeout_s: float) -> bool:
        """Wait until no abandoned action holds the session; False if one still does."""
        if self._busy.acquire(timeout=timeout_s):
            self._busy.release()
            return True
        return False


@dataclass
class SkillContext:
    """What a handler may use: who is asking, their clock and zone, the session and the embedder."""

    user_id: str
    thread_id: str
    request_id: str
    user_text: str
    zone: tzinfo
    zone_name: str
    now: datetime
    config: ActConfig
    gate: SessionGate
    embedder: Any = None
    memory: MemoryConfig = field(default_factory=MemoryConfig)  # the recall settings, read once per process
    catalog: list[dict[str, str]] = field(default_factory=list)
    ticket: ActionTicket | None = None

    @property
    def session(self) -> Session:
        """The digest's session, claimed for this action (writes are flushed, never committed)."""
        if self.ticket is None:
            raise ActionCancelled("the session is only available inside an action")
        return self.gate.claim(self.ticket)

    def for_action(self, ticket: ActionTicket) -> SkillContext:
        """This context bound to one action's claim on the session."""
        return replace(self, ticket=ticket)


def clean_text(value: Any, limit: int) -> str:
    """Collapse whitespace; raise ``SkillError`` for empty or over-long text."""
    text = " ".join(str(value or "").split())
    if not text:
        raise SkillError("invalid", "text must not be empty")
    if len(text) > limit:
        raise SkillError("invalid", f"text is longer than {limit} characters")
    return text


def pick_one(rows: list[Any], text_of: Callable[[Any], str], wanted: str, label: str) -> Any:
    """The row whose text matches ``wanted``: exact (case-insensitive) first, else the one containing it."""
    needle = " ".join(wanted.lower().split())
    exact = [row for row in rows if text_of(row).lower() == needle]
    if len(exact) == 1:
        return exact[0]
    partial = exact or [row for row in rows if needle in text_of(row).lower()]
    if not partial:
        raise SkillError("not_found", f"no {label} matching {wanted!r}",
                         available=[text_of(row) for row in rows[:20]])
    if len(partial) > 1:
        raise SkillError("ambiguous", f"{len(partial)} {label}s match {wanted!r}; say which one",
                         candidates=[text_of(row) for row in partial[:10]])
    return partial[0]


def pick_target(session: Session, rows: Select[Any], id_column: Any, row_id: int | None, match: str | None, *,
                label: str, noun: str, view: Callable[[Any], Any]) -> Any:
    """The row an update means among ``rows`` (a query already scoped to the person): by id, else by its words.

    An id is looked up in SQL; only an unknown id or a match by words loads the rows. ``label`` names a row in
    errors ("active reminder"), ``noun`` in the question when neither is given; ``view`` shows available rows.
    """
    if row_id is not None:
        found = session.scalars(rows.where(id_column == row_id)).first()
        if found is None:
            available = [view(row) for row in session.scalars(rows.limit(10))]
            raise SkillError("not_found", f"no {label} with id {row_id}", available=available)
        return found
    if not match:
        raise SkillError("needs_info", f"which {noun}?", missing=f"which {noun} (its id or words of its text)")
    return pick_one(list(session.scalars(rows)), lambda row: row.text, match, label)
