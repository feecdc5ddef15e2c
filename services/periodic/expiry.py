"""Thread expiry: a thread idle longer than ``idle_s`` ends, after its memory is flushed.

Flushing first means nothing said in the thread is lost with its Redis state: every exchange
without a memory chunk gets its chunker job, and the thread's open conversation session is
closed and its episode queued. Only then go the thread's state and working memory, and the
person's "current thread" pointer if it names this thread (their next message opens a new
thread). A thread with chat requests still pending is left alone until they are done.

The digest queues each turn's chunker job; the flush is only the net for a job that is gone
(failed for good, lost with Redis): an exchange whose job is queued, running or waiting to
run again gets no second one.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import redis
from rq import Retry
from sqlalchemy import select, update

from services.db import ConversationSession, Exchange
from services.memory.config import process_memory_config
from services.memory.models import MemoryChunk
from services.queues import (
    CHUNK_JOB_ID,
    CHUNKER_JOB,
    DELETE_IF_HELD,
    MEMORY_CHUNKER_QUEUE,
    PENDING_KEY,
    active_jobs,
    enqueue,
    job_and_retries,
    memory_job_options,
    owner_meta,
)
from services.service_call import ServiceCall, ServiceResult
from services.sessions import enqueue_episode, session_exchange_ids
from services.text import as_text
from services.threads import ACTIVE_THREADS_KEY, CURRENT_THREAD_KEY, STATE_KEY, WORKING_MEMORY_KEY

logger = logging.getLogger(__name__)

DEFAULT_IDLE_S = 6 * 3600
DEFAULT_BATCH = 500


def run(call: ServiceCall) -> ServiceResult:
    """Expire every thread idle since before ``now - idle_s``."""
    idle_s = call.option("idle_s", DEFAULT_IDLE_S)
    cutoff = call.now().timestamp() - idle_s
    connection = call.context.redis
    stale = [as_text(raw) for raw in connection.zrangebyscore(ACTIVE_THREADS_KEY, "-inf", cutoff, start=0,
                                                            num=call.option("batch", DEFAULT_BATCH))]
    if not stale:
        return ServiceResult.skipped("no thread idle that long")
    counts = {"expired": 0, "busy": 0, "chunk_jobs": 0, "episodes": 0}
    for thread_id in stale:
        if connection.llen(PENDING_KEY % thread_id):
            counts["busy"] += 1  # a chat of this thread is still queued or running
            continue
        chunks, episodes = flush_memory(call.context, thread_id, call.now())
        counts["chunk_jobs"] += chunks
        counts["episodes"] += episodes
        expire(connection, thread_id)
        counts["expired"] += 1
    return ServiceResult.ran(**counts)


def flush_memory(context: Any, thread_id: str, now: dt.datetime) -> tuple[int, int]:
    """Queue chunker jobs for unenriched exchanges and close the open session (its episode queued)."""
    with context.sessions.begin() as session:
        unenriched = session.execute(
            select(Exchange.id, Exchange.user_id).outerjoin(MemoryChunk, MemoryChunk.exchange_id == Exchange.id)
            .where(Exchange.thread_id == thread_id, MemoryChunk.id.is_(None)).order_by(Exchange.id)).all()
        closed = session.execute(
            update(ConversationSession)
            .where(ConversationSession.thread_id == thread_id, ConversationSession.ended_at.is_(None))
            .values(ended_at=now, close_reason="thread_expired")
            .returning(ConversationSession.id, ConversationSession.user_id)).all()
        members = {row.id: (session_exchange_ids(session, row.id), row.user_id) for row in closed}
    gone = without_chunk_job(context, [(row.id, row.user_id) for row in unenriched])
    for exchange_id, user_id in gone:
        enqueue(context.redis, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB, exchange_id, job_id=CHUNK_JOB_ID % exchange_id,
                retry=Retry(max=2, interval=[5, 30]), meta=owner_meta(user_id), **memory_job_options())
    episodes = [enqueue_episode(context.redis, sid, ids, user_id) for sid, (ids, user_id) in members.items() if ids]
    return len(gone), len(episodes)


def without_chunk_job(context: Any, exchanges: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Those of the (exchange id, owner) pairs none of whose chunker runs is queued, running or waiting, in one
    round trip: the job's own id, and its re-runs' after an LLM failure (each under an id of its own)."""
    retries = len(process_memory_config(context.extras, context.settings.configs_dir).chunker.retry_backoff_s)
    runs = [job_and_retries(CHUNK_JOB_ID % exchange_id, retries) for exchange_id, _ in exchanges]
    pending = set(active_jobs(context.redis, [job_id for ids in runs for job_id in ids]))
    return [exchange for exchange, ids in zip(exchanges, runs, strict=True) if pending.isdisjoint(ids)]


def expire(connection: redis.Redis, thread_id: str) -> None:
    """Drop the thread's Redis state; the person's next message starts a new thread."""
    owner = connection.hget(STATE_KEY % thread_id, "user_id")
    pipe = connection.pipeline()
    pipe.delete(STATE_KEY % thread_id, WORKING_MEMORY_KEY % thread_id)
    pipe.zrem(ACTIVE_THREADS_KEY, thread_id)
    pipe.execute()
    if owner is not None:
        key = CURRENT_THREAD_KEY % as_text(owner)
        # Compare-and-delete: the person may have moved on to a newer thread meanwhile.
        connection.eval(DELETE_IF_HELD, 1, key, thread_id)
    logger.info("thread %s expired", thread_id, extra={"thread_id": thread_id})

