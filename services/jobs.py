"""What RQ's own registries say about queues, workers and failed jobs, and retrying a failed job.

The ops page and ``/metrics`` read these; nothing here keeps its own bookkeeping, so the
numbers are exactly what RQ will act on.

Who sees and retries a failed job: every job done for a person carries its owner in RQ
``meta`` (``services.queues.owner_meta``) and is listed and retryable for that user only.
Jobs owned by no user (periodic service runs, which the scheduler enqueues, anything enqueued by
hand, and jobs queued before owner tagging existed, whose owner cannot be told safely) are operator
jobs: only the users named in ``ENGRAM_OPERATORS`` see and retry them (``Settings.is_operator``).
Without configured tokens there is a single local user, who owns every user job and operates the
deployment.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import redis
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job

from services.queues import ALL_QUEUES, job_owner, memory_job_options, owner_meta, replace_failed

FAILED_SHOWN = 20
FAILED_SCANNED = 1000  # per queue, at most, looking for the caller's own failed jobs
EXC_CHARS = 400


def queue_stats(connection: redis.Redis) -> list[dict[str, Any]]:
    """Per queue: waiting, started (running), failed, scheduled (incl. retries waiting) and deferred jobs."""
    stats = []
    for name in ALL_QUEUES:
        queue = Queue(name, connection=connection)
        stats.append({
            "queue": name,
            "queued": queue.count,
            "started": queue.started_job_registry.count,
            "failed": queue.failed_job_registry.count,
            "scheduled": queue.scheduled_job_registry.count,
            "deferred": queue.deferred_job_registry.count,
            "finished": queue.finished_job_registry.count,
        })
    return stats


def workers(connection: redis.Redis) -> list[dict[str, Any]]:
    """Every registered worker with its state, queues and current job."""
    listed = []
    for worker in Worker.all(connection=connection):
        listed.append({
            "name": worker.name,
            "state": str(worker.get_state()),
            "queues": worker.queue_names(),
            "current_job_id": worker.get_current_job_id(),
            "pid": worker.pid,
            "hostname": worker.hostname,
            "last_heartbeat": _iso(worker.last_heartbeat),
            "successful_jobs": worker.successful_job_count,
            "failed_jobs": worker.failed_job_count,
        })
    return sorted(listed, key=lambda item: (item["queues"], item["name"]))


def worker_counts(connection: redis.Redis) -> dict[str, int]:
    """Workers listening on each queue (a worker on two queues counts for both)."""
    counts = dict.fromkeys(ALL_QUEUES, 0)
    for worker in Worker.all(connection=connection):
        for name in worker.queue_names():
            counts[name] = counts.get(name, 0) + 1
    return counts


def visible_to(job: Job, user_id: str, *, operator: bool = False) -> bool:
    """Whether ``user_id`` may see and retry the job: their own, or, for an operator, a job owned by no user."""
    owner = job_owner(job.meta)
    return owner == user_id or (owner is None and operator)


def failed_jobs(connection: redis.Redis, user_id: str, *, operator: bool = False) -> list[dict[str, Any]]:
    """The most recent failed jobs ``user_id`` may see, across queues, newest first, with their error's last line."""
    found = []
    for name in ALL_QUEUES:
        registry = Queue(name, connection=connection).failed_job_registry
        shown = 0
        # Others' jobs are skipped, so read the registry a page at a time until ``FAILED_SHOWN`` are visible.
        for start in range(0, FAILED_SCANNED, FAILED_SHOWN):
            job_ids = registry.get_job_ids(start, start + FAILED_SHOWN - 1, desc=True)
            for job in Job.fetch_many(job_ids, connection=connection):
                if job is not None and visible_to(job, user_id, operator=operator) and shown < FAILED_SHOWN:
                    found.append(_failed_dict(name, job))
                    shown += 1
            if shown >= FAILED_SHOWN or len(job_ids) < FAILED_SHOWN:
                break
    found.sort(key=lambda item: item["ended_at"] or "", reverse=True)
    return found[:FAILED_SHOWN]


def _failed_dict(queue: str, job: Job) -> dict[str, Any]:
    result = job.latest_result()
    exc = (result.exc_string if result is not None else None) or ""
    lines = [line for line in exc.strip().splitlines() if line.strip()]
    return {
        "id": job.id,
        "queue": queue,
        "function": job.func_name,
        "description": (job.description or "")[:200],
        "ended_at": _iso(job.ended_at),
        "error": (lines[-1] if lines else "")[:EXC_CHARS],
    }


class NotFailed(LookupError):
    """The job is not in any queue's failed registry (unknown, expired, already retried) or is another user's."""


def retry_failed(connection: redis.Redis, job_id: str, user_id: str, *, operator: bool = False) -> str:
    """Put ``user_id``'s failed job (or, for an operator, one owned by no user) back on its queue; returns the queue."""
    for name in ALL_QUEUES:
        registry = Queue(name, connection=connection).failed_job_registry
        if job_id in registry:
            try:
                job = Job.fetch(job_id, connection=connection)
            except NoSuchJobError:
                break
            if not visible_to(job, user_id, operator=operator):
                break  # answered exactly like a missing job: no hint that the id exists
            try:
                registry.requeue(job)
            except NoSuchJobError:
                break
            return name
    raise NotFailed(job_id)


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:  # RQ stores naive UTC
        value = value.replace(tzinfo=dt.UTC)
    return value.isoformat()


def enqueue_jobs(connection: redis.Redis, queue_name: str, func_path: str, jobs: list[tuple[Any, str]],
                 user_id: str) -> int:
    """Enqueue ``user_id``'s jobs in one round trip (``job_id`` makes a repeated enqueue replace, not duplicate)."""
    queue = Queue(queue_name, connection=connection)
    options = memory_job_options()
    data = [Queue.prepare_data(func_path, args=(arg,), job_id=job_id, timeout=options["job_timeout"],
                               result_ttl=options["result_ttl"], failure_ttl=options["failure_ttl"],
                               meta=owner_meta(user_id))
            for arg, job_id in jobs]
    with connection.pipeline() as pipe:  # one MULTI: the jobs, and their earlier failed runs taken off the list
        enqueued = queue.enqueue_many(data, pipeline=pipe)
        replace_failed(pipe, queue, [job_id for _, job_id in jobs])
        pipe.execute()
    return len(enqueued)
