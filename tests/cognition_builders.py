"""Keyword-only builders for the cognition service tests: people, activity, memories."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from dataclasses import replace
from typing import Any

from services.cognition.config import cognition_config
from services.db import ConversationSession, Thread, User, insert
from services.memory.models import Episode, Fact
from services.service_call import ServiceCall

_fires = itertools.count(1)


class Clock:
    """A settable "now" for ServiceCall.clock."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> dt.datetime:
        self.now += dt.timedelta(**delta)
        return self.now


def service_call(context: Any, name: str, clock: Clock, fire_id: str | None = None) -> ServiceCall:
    return ServiceCall(name=name, fire_id=fire_id or f"{name}-{next(_fires)}", context=context, clock=clock)


def set_config(context: Any, section: str, **values: Any) -> None:
    """Override some settings of one section of configs/cognition.toml for this context."""
    config = cognition_config(context)
    context.extras["cognition_config"] = replace(config, **{section: replace(getattr(config, section), **values)})


def person(db: Any, *, user_id: str = "ada", timezone: str = "Europe/Berlin") -> str:
    db.execute(insert(User).values(id=user_id, timezone=timezone).on_conflict_do_nothing())
    return user_id


def thread(db: Any, *, user_id: str) -> str:
    thread_id = f"t-{uuid.uuid4().hex[:12]}"
    db.execute(insert(Thread).values(id=thread_id, user_id=user_id))
    return thread_id


def activity(db: Any, *, user_id: str, at: dt.datetime, thread_id: str | None = None) -> str:
    """A conversation session whose last message was at ``at``."""
    thread_id = thread_id or thread(db, user_id=user_id)
    session_id = f"s-{uuid.uuid4().hex[:12]}"
    db.add(ConversationSession(id=session_id, user_id=user_id, thread_id=thread_id, topic="general",
                               started_at=at, last_active_at=at))
    db.flush()
    return session_id


def fact(db: Any, *, user_id: str, text: str, at: dt.datetime, salience: float = 0.6) -> int:
    row = Fact(user_id=user_id, text=text, salience=salience, created_at=at, updated_at=at, source_exchange_ids=[])
    db.add(row)
    db.flush()
    return row.id


def episode(db: Any, *, user_id: str, title: str, gist: str, at: dt.datetime, salience: float = 0.6,
            outcome: str | None = None) -> int:
    row = Episode(user_id=user_id, session_id=f"s-{uuid.uuid4().hex[:8]}", title=title, gist=gist, summary=gist,
                  salience=salience, outcome=outcome, open_loops=[], exchange_ids=[], created_at=at,
                  started_at=at, ended_at=at)
    db.add(row)
    db.flush()
    return row.id

