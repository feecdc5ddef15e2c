"""Conversation threads in Redis: state, working memory and the user's current thread.

PostgreSQL holds which user owns a thread (``threads`` table) and every exchange; Redis
holds the hot state a turn needs, with a TTL so idle threads fade on their own.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import redis
from sqlalchemy import TextClause
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Session

from services.db import Thread, User, insert
from services.text import as_text

STATE_KEY = "thread:state:%s"
WORKING_MEMORY_KEY = "thread:wm:%s"
CURRENT_THREAD_KEY = "user:current_thread:%s"
WARMTH_HALF_LIFE_S = 15 * 60
THREAD_TTL_S = 6 * 3600  # how long an idle thread's hot state stays in Redis
ACTIVE_THREADS_KEY = "threads:active"  # zset thread_id → last activity, for expiry sweeps
_SETTING_NAME = re.compile(r"[a-z_]+(\.[a-z_]+)?")


def blend_confidence(current: float, new: float) -> float:
    """Bounded reinforcement: move halfway from the current confidence to the new one."""
    return current + (new - current) * 0.5


@dataclass
class ThreadState:
    thread_id: str
    user_id: str | None = None
    topic: str | None = None
    topic_confidence: float = 0.0
    last_active: float = 0.0
    last_mode: str | None = None
    turns_since_mode: int = 0
    turns: int = 0
    started: float = 0.0  # when the thread's first exchange was recorded (0: none yet)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_hash(cls, thread_id: str, raw: dict[Any, Any]) -> ThreadState:
        data = {as_text(k): as_text(v) for k, v in raw.items()}
        return cls(
            thread_id=thread_id,
            user_id=data.get("user_id"),
            topic=data.get("topic") or None,
            topic_confidence=float(data.get("topic_confidence", 0) or 0),
            last_active=float(data.get("last_active", 0) or 0),
            last_mode=data.get("last_mode") or None,
            turns_since_mode=int(data.get("turns_since_mode", 0) or 0),
            turns=int(data.get("turns", 0) or 0),
            started=float(data.get("started", 0) or 0),
            extra=json.loads(data.get("extra") or "{}"),
        )


class ThreadStore:
    def __init__(self, connection: redis.Redis, *, ttl_s: int = THREAD_TTL_S, working_memory_size: int = 10) -> None:
        self.redis = connection
        self.ttl_s = ttl_s
        self.working_memory_size = working_memory_size

    def state(self, thread_id: str) -> ThreadState:
        return ThreadState.from_hash(thread_id, self.redis.hgetall(STATE_KEY % thread_id))

    def save_fields(self, thread_id: str, **fields: Any) -> None:
        """Write some state fields and refresh the TTL."""
        mapping = {k: json.dumps(v) if k == "extra" else ("" if v is None else v) for k, v in fields.items()}
        pipe = self.redis.pipeline()
        pipe.hset(STATE_KEY % thread_id, mapping=mapping)
        pipe.expire(STATE_KEY % thread_id, self.ttl_s)
        pipe.execute()

    def snapshot(self, thread_id: str) -> tuple[ThreadState, list[dict[str, Any]]]:
        """State and working memory together, in one round trip (the digest reads both once per turn)."""
        read = self.redis.pipeline(transaction=False)
        self.queue_snapshot(read, thread_id)
        return read_snapshot(thread_id, *read.execute())

    def queue_snapshot(self, pipeline: redis.client.Pipeline, thread_id: str) -> None:
        """Queue the snapshot's two reads on the caller's pipeline; ``read_snapshot`` reads their two results."""
        pipeline.hgetall(STATE_KEY % thread_id)
        pipeline.lrange(WORKING_MEMORY_KEY % thread_id, 0, -1)

    def working_memory(self, thread_id: str) -> list[dict[str, Any]]:
        """Recent exchanges of the thread, oldest first."""
        return [json.loads(item) for item in self.redis.lrange(WORKING_MEMORY_KEY % thread_id, 0, -1)]

    def record_exchange(self, thread_id: str, user_id: str, entry: dict[str, Any], *, now: float | None = None,
                        known: tuple[ThreadState, list[dict[str, Any]]] | None = None,
                        topic: tuple[str, float] | None = None, pipeline: redis.client.Pipeline | None = None) -> bool:
        """Append a finished exchange to working memory once; returns False if it was already there.

        ``known``: the thread's state and working memory as this turn read them (``snapshot``) while
        holding the thread's lease, which nobody else changes meanwhile: no second read.
        ``topic``: the thread's topic and its blended confidence (``blended_topic_confidence``), written with it.
        ``pipeline``: queue the writes on the caller's pipeline (it executes them) instead of sending them now.
        """
        now = time.time() if now is None else now
        key = WORKING_MEMORY_KEY % thread_id
        state, memory = known if known is not None else self.snapshot(thread_id)
        if any(item.get("request_id") == entry.get("request_id") for item in memory):
            return False
        same_mode = state.last_mode == entry.get("mode")
        pipe = pipeline if pipeline is not None else self.redis.pipeline()
        # Its number in the thread: the small model's history window moves in steps of it (llm/profile.py).
        pipe.rpush(key, json.dumps({**entry, "turn": state.turns + 1}))
        pipe.ltrim(key, -self.working_memory_size, -1)
        pipe.expire(key, self.ttl_s)
        fields: dict[str, Any] = {
            "user_id": user_id,
            "last_active": now,
            "last_mode": entry.get("mode") or "",
            "turns_since_mode": state.turns_since_mode + 1 if same_mode else 1,
            "turns": state.turns + 1,
            "started": state.started or now,
        }
        if topic is not None:
            fields.update(topic=topic[0], topic_confidence=round(topic[1], 4))
        pipe.hset(STATE_KEY % thread_id, mapping=fields)
        pipe.expire(STATE_KEY % thread_id, self.ttl_s)
        pipe.zadd(ACTIVE_THREADS_KEY, {thread_id: now})
        if pipeline is None:
            pipe.execute()
        return True

    def current_thread(self, user_id: str) -> str | None:
        """The user's current thread; reading it keeps it current for another TTL (one round trip)."""
        value = self.redis.getex(CURRENT_THREAD_KEY % user_id, ex=self.ttl_s)
        return as_text(value) if value else None

    def set_current_thread(self, user_id: str, thread_id: str) -> None:
        self.redis.set(CURRENT_THREAD_KEY % user_id, thread_id, ex=self.ttl_s)


def read_snapshot(thread_id: str, raw_state: dict[Any, Any],
                  memory: list[Any]) -> tuple[ThreadState, list[dict[str, Any]]]:
    """The results of ``ThreadStore.queue_snapshot``'s two reads as the thread's state and working memory."""
    return ThreadState.from_hash(thread_id, raw_state), [json.loads(item) for item in memory]


def blended_topic_confidence(state: ThreadState, topic: str, confidence: float) -> float:
    """The thread's confidence in ``topic``: blended while the topic continues, reset on a switch."""
    return blend_confidence(state.topic_confidence, confidence) if state.topic == topic else confidence


def touch_thread(session: Session, user_id: str, thread_id: str, now: dt.datetime,
                 settings: dict[str, str]) -> None:
    """Mark the user's thread active in PostgreSQL, in the caller's transaction (the digest job's), applying the
    transaction-local ``settings`` (``SET LOCAL``) in the same statement: the digest opens its transaction with
    it, one round trip for both.

    ``POST /chat`` trusts the user's current thread from Redis without asking PostgreSQL; if its
    row went away meanwhile (the person's data was forgotten while the message was queued), it is
    made again under the same id, so the exchange about to be stored has its thread.
    """
    touched = session.scalar(_touch_statement(tuple(settings)),
                             {"thread_id": thread_id, "user_id": user_id, "now": now,
                              **{f"setting_{n}": value for n, value in enumerate(settings.values())}})
    if touched is None:
        session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
        session.execute(insert(Thread).values(id=thread_id, user_id=user_id, last_active_at=now)
                        .on_conflict_do_nothing())


@functools.cache
def _touch_statement(setting_names: tuple[str, ...]) -> TextClause:
    """The thread's UPDATE … RETURNING in a CTE; the select list applies the settings (built once per process)."""
    if not all(_SETTING_NAME.fullmatch(name) for name in setting_names):  # names are code, never input
        raise ValueError(f"not a setting name: {setting_names}")
    applied = "".join(f", set_config('{name}', :setting_{n}, true)" for n, name in enumerate(setting_names))
    return sql_text("WITH touched AS (UPDATE threads SET last_active_at = :now WHERE id = :thread_id"
                    f" AND user_id = :user_id RETURNING id) SELECT (SELECT id FROM touched){applied}")


def context_warmth(state: ThreadState, now: float) -> float:
    """How live the conversation is: recent turns, fading with time since the last one."""
    if not state.turns or not state.last_active:
        return 0.0
    depth = min(1.0, state.turns / 3)
    return round(depth * math.exp(-math.log(2) * max(0.0, now - state.last_active) / WARMTH_HALF_LIFE_S), 4)


def history_text(working_memory: list[dict[str, Any]]) -> str:
    """Render working memory as plain text for a prompt (history goes in as text, not messages)."""
    lines: list[str] = []
    for item in working_memory:
        lines.append(f"User: {item.get('user', '')}")
        if item.get("reply"):
            lines.append(f"Engram: {item['reply']}")
    return "\n".join(lines) if lines else "(no earlier messages in this conversation)"

