"""Conversation sessions: runs of exchanges on one topic; closing one queues its episode.

A session closes on a topic switch or after a quiet spell; the closed session's episode
job goes to ``episodic-memory-queue`` with the session id (the job reads its exchanges).
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass

import redis
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session, sessionmaker

from services.db import ConversationSession, Exchange
from services.queues import CHUNK_JOB_ID, EPISODE_JOB, EPISODIC_QUEUE, enqueue, memory_job_options, owner_meta

logger = logging.getLogger(__name__)

SESSION_IDLE_S = 30 * 60  # a session with no message for this long is over


@dataclass(frozen=True)
class SessionStep:
    session_id: str
    closed_session_id: str | None = None
    close_reason: str | None = None
    closed_exchange_ids: tuple[int, ...] = ()  # the closed session's exchanges, oldest first


def place_in_session(
    db: Session, user_id: str, thread_id: str, topic: str, *, switched: bool, now: dt.datetime, idle_after_s: float
) -> SessionStep:
    """Continue the thread's open session, or close it (topic switch / quiet spell) and open a new one.

    One statement whatever the case (it runs on every chat turn): lock the thread's open session,
    decide, then continue it, or close it and open the next.
    """
    row = db.execute(PLACE_IN_SESSION, {
        "thread_id": thread_id, "user_id": user_id, "topic": topic, "switched": switched, "now": now,
        "cutoff": now - dt.timedelta(seconds=idle_after_s), "opened": str(uuid.uuid4()),
    }).one()
    if row.continued is not None:
        return SessionStep(row.continued)
    return SessionStep(row.opened, row.closed, row.close_reason, tuple(row.closed_exchange_ids or ()))


# The open session (the newest, locked), continued when the topic holds and it is not quiet;
# otherwise closed with its reason and a new one opened, and the closed one's exchanges listed (its
# episode job needs them). Data-modifying CTEs see the same snapshot, so "opened" asks "continued"
# (its RETURNING rows) whether to insert.
PLACE_IN_SESSION = text("""
WITH current AS (
    SELECT id, CASE WHEN CAST(:switched AS boolean) AND topic <> :topic THEN 'topic_switch'
                    WHEN last_active_at < :cutoff THEN 'inactivity' END AS reason
    FROM sessions WHERE thread_id = :thread_id AND ended_at IS NULL
    ORDER BY started_at DESC LIMIT 1 FOR UPDATE
), continued AS (
    UPDATE sessions SET last_active_at = :now FROM current
    WHERE sessions.id = current.id AND current.reason IS NULL RETURNING sessions.id
), closed AS (
    UPDATE sessions SET ended_at = :now, close_reason = current.reason FROM current
    WHERE sessions.id = current.id AND current.reason IS NOT NULL RETURNING sessions.id, sessions.close_reason
), opened AS (
    INSERT INTO sessions (id, user_id, thread_id, topic, started_at, last_active_at)
    SELECT :opened, :user_id, :thread_id, :topic, :now, :now WHERE NOT EXISTS (SELECT 1 FROM continued)
    RETURNING id
)
SELECT (SELECT id FROM continued) AS continued, (SELECT id FROM opened) AS opened,
       (SELECT id FROM closed) AS closed, (SELECT close_reason FROM closed) AS close_reason,
       (SELECT array_agg(id ORDER BY id) FROM exchanges WHERE session_id = (SELECT id FROM closed))
           AS closed_exchange_ids
""")


def session_exchange_ids(db: Session, session_id: str) -> list[int]:
    return list(db.scalars(select(Exchange.id).where(Exchange.session_id == session_id).order_by(Exchange.id)))


def enqueue_episode(connection: redis.Redis, session_id: str, exchange_ids: list[int], user_id: str) -> str | None:
    """Queue the episode of ``user_id``'s closed session (once: the job id is the session's).

    It waits for the chunker jobs of the session's exchanges still to run (the episode is made of
    their chunks); the job itself still waits, with backoff, for any chunk that did not appear.
    """
    job_id = enqueue(
        connection,
        EPISODIC_QUEUE,
        EPISODE_JOB,
        session_id,
        job_id=f"episode-{session_id}",
        description=f"episode of session {session_id} ({len(exchange_ids)} exchanges: {exchange_ids[:50]})",
        meta=owner_meta(user_id, exchange_ids=exchange_ids),
        after=[CHUNK_JOB_ID % exchange_id for exchange_id in exchange_ids],
        **memory_job_options(),
    )
    if job_id:
        logger.info("queued episode of session %s with %d exchanges", session_id, len(exchange_ids))
    return job_id


def close_quiet_sessions(
    sessions: sessionmaker[Session], connection: redis.Redis, *, idle_after_s: float, now: dt.datetime | None = None
) -> list[str]:
    """Close sessions that went quiet and queue their episodes (the scheduler's sweep)."""
    now = now or dt.datetime.now(dt.UTC)
    cutoff = now - dt.timedelta(seconds=idle_after_s)
    with sessions.begin() as db:
        closed = [
            (row.id, row.user_id)
            for row in db.execute(
                update(ConversationSession)
                .where(ConversationSession.ended_at.is_(None), ConversationSession.last_active_at < cutoff)
                .values(ended_at=now, close_reason="inactivity")
                .returning(ConversationSession.id, ConversationSession.user_id)
            )
        ]
        exchange_ids = {session_id: session_exchange_ids(db, session_id) for session_id, _ in closed}
    for session_id, user_id in closed:
        if exchange_ids[session_id]:
            enqueue_episode(connection, session_id, exchange_ids[session_id], user_id)
    return [session_id for session_id, _ in closed]
