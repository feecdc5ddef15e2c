"""Forget a user: purge every store — PostgreSQL rows, Redis keys, queued jobs — and count what went.

PostgreSQL: every table with a ``user_id`` column, children before parents, then the user row.
Redis: thread state and working memory, pending and queued chat requests, event logs and
outputs of the user's requests, the user's proactive stream, and the RQ jobs whose arguments
point at the user's requests, exchanges, sessions, facts or episodes. A job that is running
cannot be removed safely; it is counted, and fails when it finds its rows gone.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import redis
from rq import Queue
from rq.job import Job
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from services.memory import person_index
from services.memory.vectors import FORGETTING
from services.queues import (
    ALL_QUEUES,
    ATTEMPTS_KEY,
    CHUNKER_JOB,
    EMBED_JOB,
    LEASE_KEY,
    PENDING_KEY,
    REQUEST_KEY,
)
from services.streams import ENDS_KEY, LOG_KEY, OUTPUT_KEY, REQUEST_CHANNEL, USER_CHANNEL
from services.text import as_text
from services.threads import ACTIVE_THREADS_KEY, CURRENT_THREAD_KEY, STATE_KEY, WORKING_MEMORY_KEY

logger = logging.getLogger(__name__)

THREAD_KEYS = (STATE_KEY, WORKING_MEMORY_KEY, PENDING_KEY, LEASE_KEY)
RESULTS_KEY = "rq:results:%s"  # RQ 2 keeps job results in a stream beside the job hash
REQUEST_KEYS = (REQUEST_KEY, ATTEMPTS_KEY, OUTPUT_KEY, LOG_KEY % REQUEST_CHANNEL, ENDS_KEY % REQUEST_CHANNEL,
                RESULTS_KEY % "digest-%s")
INT_ARG_JOBS = {CHUNKER_JOB: "exchange", EMBED_JOB: "item"}


@dataclass
class UserFootprint:
    """The user's ids, collected before anything is deleted."""

    user_id: str
    threads: set[str] = field(default_factory=set)
    requests: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    exchanges: set[int] = field(default_factory=set)
    items: set[tuple[str, int]] = field(default_factory=set)  # (kind, id) of facts and episodes

    def strings(self) -> set[str]:
        return {self.user_id} | self.threads | self.requests | self.sessions


@dataclass
class ForgetReport:
    user_id: str
    rows: dict[str, int] = field(default_factory=dict)
    redis_keys: int = 0
    jobs_removed: int = 0
    jobs_running: int = 0
    indexes_dropped: bool = False  # their own indexes (services/memory/person_index.py)

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "postgres_rows": self.rows, "postgres_total": sum(self.rows.values()),
                "own_indexes_dropped": self.indexes_dropped,
                "redis_keys": self.redis_keys, "jobs_removed": self.jobs_removed, "jobs_running": self.jobs_running}


def forget_user(sessions: sessionmaker[Session], connection: redis.Redis | None, user_id: str) -> ForgetReport:
    """Delete everything of ``user_id``; Redis first, so no queued job recreates what is being deleted."""
    report = ForgetReport(user_id)
    with sessions() as session:
        footprint = collect(session, user_id)
    if connection is not None:
        _scan_redis_owned(connection, footprint)
        report.jobs_removed, report.jobs_running = purge_jobs(connection, footprint)
        report.redis_keys = purge_keys(connection, footprint)
    with sessions.begin() as session:
        report.rows = purge_rows(session, user_id)
        engine = session.get_bind().engine
    # After the rows' commit (a concurrent drop cannot run in a transaction): their own indexes, copies of their
    # vectors and words.
    report.indexes_dropped = person_index.drop(engine, user_id)
    logger.info("forgot user %s: %s", user_id, report.to_dict(), extra={"user_id": user_id})
    return report


def collect(session: Session, user_id: str) -> UserFootprint:
    footprint = UserFootprint(user_id)
    params = {"user": user_id}
    footprint.threads = set(session.scalars(text("SELECT id FROM threads WHERE user_id = :user"), params))
    footprint.sessions = set(session.scalars(text(
        "SELECT id FROM sessions WHERE user_id = :user UNION SELECT session_id FROM episodes WHERE user_id = :user "
        "UNION SELECT session_id FROM memory_chunks WHERE user_id = :user AND session_id IS NOT NULL"), params))
    for row in session.execute(text("SELECT id, request_id FROM exchanges WHERE user_id = :user"), params):
        footprint.exchanges.add(int(row.id))
        footprint.requests.add(row.request_id)
    for kind, table in (("fact", "facts"), ("episode", "episodes")):
        footprint.items.update((kind, int(i)) for i in session.scalars(
            text(f"SELECT id FROM {table} WHERE user_id = :user"), params))
    return footprint



def _scan_redis_owned(connection: redis.Redis, footprint: UserFootprint) -> None:
    """Add requests and threads known only to Redis (queued, not yet stored) to the footprint."""
    for key in connection.scan_iter(match=REQUEST_KEY % "*", count=500):
        raw = connection.get(key)
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            continue
        if isinstance(payload, dict) and payload.get("user_id") == footprint.user_id:
            footprint.requests.add(as_text(key).split(":", 2)[2])
            footprint.threads.add(str(payload.get("thread_id")))
    for key in connection.scan_iter(match=STATE_KEY % "*", count=500):
        if as_text(connection.hget(key, "user_id") or b"") == footprint.user_id:
            footprint.threads.add(as_text(key).split(":", 2)[2])


def purge_keys(connection: redis.Redis, footprint: UserFootprint) -> int:
    keys = [pattern % thread for thread in footprint.threads for pattern in THREAD_KEYS]
    keys += [pattern % request for request in footprint.requests for pattern in REQUEST_KEYS]
    keys += [CURRENT_THREAD_KEY % footprint.user_id, LOG_KEY % (USER_CHANNEL % footprint.user_id)]
    user = _glob_escape(footprint.user_id)
    for pattern in (f"user:*:{user}", f"*:user:{user}", f"*:user:{user}:*"):
        keys += [as_text(key) for key in connection.scan_iter(match=pattern, count=500)]
    deleted = 0
    unique = sorted(set(keys))
    for start in range(0, len(unique), 500):
        deleted += int(connection.delete(*unique[start : start + 500]) or 0)
    if footprint.threads:
        connection.zrem(ACTIVE_THREADS_KEY, *footprint.threads)
    return deleted


def _glob_escape(value: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", value)


def _job_ids(queue: Queue) -> set[str]:
    ids = set(queue.get_job_ids())
    for registry in (queue.scheduled_job_registry, queue.deferred_job_registry, queue.finished_job_registry,
                     queue.failed_job_registry, queue.canceled_job_registry):
        ids.update(registry.get_job_ids())
    return ids


def _owned(job: Job, footprint: UserFootprint, strings: set[str]) -> bool:
    """Whether a job's arguments point at the user (``strings``: ``footprint.strings()``, built once per purge)."""
    try:
        args = list(job.args or []) + list((job.kwargs or {}).values())
        func = job.func_name
    except Exception:  # an unreadable payload cannot be attributed; leave it to RQ's own expiry
        return False
    if any(isinstance(arg, str) and arg in strings for arg in args):
        return True
    kind = INT_ARG_JOBS.get(func)
    if kind == "exchange":
        return bool(args) and args[0] in footprint.exchanges
    if kind == "item":
        return len(args) >= 2 and (args[0], args[1]) in footprint.items
    return False


def purge_jobs(connection: redis.Redis, footprint: UserFootprint) -> tuple[int, int]:
    """Delete the user's queued, scheduled, deferred, finished and failed jobs; count running ones."""
    removed = running = 0
    strings = footprint.strings()
    for name in ALL_QUEUES:
        queue = Queue(name, connection=connection)
        ids = sorted(_job_ids(queue))
        for job in Job.fetch_many(ids, connection=connection):
            if job is not None and _owned(job, footprint, strings):
                job.delete()
                connection.delete(RESULTS_KEY % job.id)
                removed += 1
        started = queue.started_job_registry.get_job_ids()
        running += sum(1 for job in Job.fetch_many(started, connection=connection)
                       if job is not None and _owned(job, footprint, strings))
    return removed, running


def user_tables(session: Session) -> list[str]:
    """Tables with a ``user_id`` column, ordered so that referencing tables come before referenced ones."""
    tables = set(session.scalars(text(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
        "AND column_name = 'user_id' AND table_name IN (SELECT tablename FROM pg_tables WHERE schemaname = 'public')")))
    edges = session.execute(text(
        "SELECT DISTINCT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent "
        "FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid <> c.confrelid")).all()
    parents = {table: {e.parent for e in edges if e.child == table and e.parent in tables} for table in tables}
    ordered: list[str] = []
    while parents:
        # Delete a table once nothing left in the list still references it.
        ready = sorted(t for t in parents if not any(t in ps for other, ps in parents.items() if other != t))
        if not ready:  # a reference cycle: cascades handle the rest
            ready = sorted(parents)
        for table in ready:
            ordered.append(table)
            parents.pop(table)
    return ordered


def purge_rows(session: Session, user_id: str) -> dict[str, int]:
    """Delete the user's rows in every table, then the user; returns rows deleted per table."""
    # First, holding nothing else: the vector backfill's short reads and writes of this person end, and no new one
    # starts (it skips a person being forgotten), so no statement below waits on its locks or it on theirs.
    session.execute(text(f"SELECT pg_advisory_xact_lock({FORGETTING.format(user=':user')})"), {"user": user_id})
    counts: dict[str, int] = {}
    for table in user_tables(session):
        result = session.execute(text(f'DELETE FROM "{table}" WHERE user_id = :user'), {"user": user_id})
        if result.rowcount:
            counts[table] = int(result.rowcount)
    result = session.execute(text("DELETE FROM users WHERE id = :user"), {"user": user_id})
    if result.rowcount:
        counts["users"] = int(result.rowcount)
    return counts
