"""Queue names, enqueueing by dotted path, and per-thread ordering of digest jobs.

The web process enqueues ``workers.digest.run`` by its dotted path so it never imports
worker code (or torch). Ordering: each thread keeps a pending list of request ids in
arrival order and a lease lock; a digest job only processes the head of its thread's list
while holding the lease (see ``workers/digest.py``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.exceptions import WatchError
from rq import Callback, Queue, Retry
from rq.job import Dependency, Job, JobStatus

PROMPT_QUEUE = "prompt-queue"
MEMORY_CHUNKER_QUEUE = "memory-chunker-queue"
EPISODIC_QUEUE = "episodic-memory-queue"
BACKGROUND_QUEUE = "background-queue"
# Short periodic services (reminders, thread expiry, assimilation) get their own worker, so a
# reminder never waits behind a goal's long ACT loop or a drift thought on background-queue.
PERIODIC_QUEUE = "periodic-queue"
ALL_QUEUES = (PROMPT_QUEUE, MEMORY_CHUNKER_QUEUE, EPISODIC_QUEUE, BACKGROUND_QUEUE, PERIODIC_QUEUE)

DIGEST_JOB = "workers.digest.run"
# Memory jobs, enqueued by dotted path from the digest, the scheduler, the importer and the REST edits.
CHUNKER_JOB = "workers.memory_chunker.run"
EPISODE_JOB = "workers.episodic_memory.run"
EMBED_JOB = "workers.memory_chunker.embed_item"
# A memory job makes up to 4 LLM calls (complete_json retries once on invalid JSON and the chunk/episode
# validation asks once more), each within its role's timeout_s in configs/agents.toml (150 s at most for
# the memory roles); a minute more covers reading, embedding and storing.
MEMORY_JOB_TIMEOUT_S = 4 * 150 + 60
MEMORY_RESULT_TTL_S = 3600
MEMORY_FAILURE_TTL_S = 7 * 24 * 3600
REQUEST_KEY = "chat:request:%s"  # the request payload, read by the digest job
PENDING_KEY = "thread:pending:%s"  # request ids of a thread in arrival order
LEASE_KEY = "thread:lease:%s"  # who is processing the thread right now
ATTEMPTS_KEY = "chat:attempts:%s"
OUTPUT_KEY = "output:%s"  # a request's final output (reply or error), written by services/streams.py
# The RQ ``meta`` key naming the user a job works for: the ops page shows and retries a failed job
# only for its owner (see services/jobs.py). Periodic service runs have none: they are operator jobs.
OWNER_META_KEY = "user_id"

# Compare-and-delete / compare-and-extend so a worker never releases someone else's lease (KEYS: it; ARGV: token).
DELETE_IF_HELD = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
# A process ("<host>:<pid>", services.supervisor.process_key) → {lease key: token} of the leases it holds: when
# it dies, its supervisor lapses them at once (``lapse_held``) instead of each waiting out its TTL.
HELD_KEY = "engram:held:%s"
HELD_TTL_S = 24 * 3600
# KEYS: lease, held; ARGV: token, ttl ms. Take the lease if free and note it among the holder's.
_CLAIM_HELD = """
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('hset', KEYS[2], KEYS[1], ARGV[1])
  redis.call('expire', KEYS[2], 86400)
  return 1
end
return 0
"""
_EXTEND = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)


@dataclass(frozen=True)
class ChatRequest:
    request_id: str
    user_id: str
    thread_id: str
    text: str
    source: str
    received_at: float

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, raw: str | bytes) -> ChatRequest:
        return cls(**json.loads(raw))


def queue(name: str, connection: redis.Redis) -> Queue:
    return Queue(name, connection=connection)


def submit_chat(connection: redis.Redis, request: ChatRequest, *, ttl_s: int, timeout_s: int, retries: int,
                pipeline: redis.client.Pipeline) -> str:
    """Store the request, append it to its thread's pending list and enqueue the digest job, atomically: on
    ``pipeline``, a transaction the caller started with ``multi()`` (as RQ expects of a pipeline it is handed) and
    executes. One MULTI/EXEC: if Redis goes away half-way, nothing is left behind (a pending entry without
    its job would be processed later by the thread's next job, for a request the client was told failed).
    """
    pipeline.set(REQUEST_KEY % request.request_id, request.to_json(), ex=ttl_s)
    pipeline.rpush(PENDING_KEY % request.thread_id, request.request_id)
    pipeline.expire(PENDING_KEY % request.thread_id, ttl_s)
    job = queue(PROMPT_QUEUE, connection).enqueue(
        DIGEST_JOB,
        request.request_id,
        job_id=f"digest-{request.request_id}",
        job_timeout=timeout_s,
        result_ttl=ttl_s,
        failure_ttl=7 * 24 * 3600,
        retry=Retry(max=retries, interval=[1, 5, 15][:retries] or None) if retries else None,
        on_failure=Callback("workers.request_failure.on_failure"),
        description=f"digest {request.request_id}",
        meta=owner_meta(request.user_id),
        pipeline=pipeline,
    )
    return str(job.id)


ACTIVE_STATUSES = ("queued", "started", "deferred", "scheduled")
CHUNK_JOB_ID = "chunk-%s"  # the chunker job of one exchange (one per exchange: a repeated enqueue is skipped)
# A memory job's re-run after a transient LLM failure (workers/memory_chunker.reschedule): the job's id and the
# attempt's number. An id of its own: the run that schedules it is still running under the job's id.
RETRY_JOB_ID = "%s-retry%d"


def job_active(connection: redis.Redis, job_id: str) -> bool:
    """Whether the job is queued, running, deferred or scheduled (one read of its status field)."""
    return bool(active_jobs(connection, [job_id]))


def job_and_retries(job_id: str, retries: int) -> list[str]:
    """The ids a memory job runs under: its own, then its re-runs' (``RETRY_JOB_ID``), ``retries`` of them."""
    return [job_id, *(RETRY_JOB_ID % (job_id, attempt) for attempt in range(1, retries + 1))]


def active_jobs(connection: redis.Redis, job_ids: Sequence[str]) -> list[str]:
    """Those of ``job_ids`` that are queued, running, deferred or scheduled (one round trip)."""
    if not job_ids:
        return []
    return [job_id for job_id, status in zip(job_ids, _statuses(connection, job_ids), strict=True)
            if status in ACTIVE_STATUSES]


# The status field of each job hash in KEYS (nil for a job that is gone), in one round trip.
_STATUSES = "local r = {} for i, key in ipairs(KEYS) do r[i] = redis.call('hget', key, 'status') end return r"


def _statuses(client: redis.Redis | redis.client.Pipeline, job_ids: Sequence[str]) -> list[str | None]:
    """The jobs' statuses (None for one that is gone), in one round trip: one script, so it also reads
    inside a WATCH, where a pipeline runs each command on its own."""
    raw = client.eval(_STATUSES, len(job_ids), *[Job.key_for(job_id) for job_id in job_ids])
    return [status.decode() if isinstance(status, bytes) else status for status in raw]


def enqueue(
    connection: redis.Redis, queue_name: str, func_path: str, *args: Any, job_id: str | None = None,
    after: Sequence[str] = (), **options: Any,
) -> str | None:
    """Enqueue by dotted path; with a ``job_id`` a job that is already queued is not queued twice.

    Two round trips: the job's status, then RQ's enqueue (queue set, job hash, push) as one
    transaction (RQ's own fetch-then-enqueue takes four on the digest's hot path).

    ``after``: ids of jobs this one should follow. Those still queued, running or waiting for a
    retry hold it back as RQ dependencies: it is deferred, and the worker that ends the last of
    them (done or failed for good) queues it. Finished or unknown ones hold nothing back. So an
    episode waits for its chunks without running, rescheduling itself and being moved back by the
    scheduler again and again while the chunker is behind (as it is during a burst of chats).
    Three round trips then (``_enqueue_after``).
    """
    if after:
        return _enqueue_after(connection, queue(queue_name, connection), func_path, args, job_id, list(after), options)
    if job_id is not None and job_active(connection, job_id):
        return None
    rq_queue = queue(queue_name, connection)
    pipe = connection.pipeline(transaction=True)
    pipe.multi()  # explicit, as RQ expects of a pipeline it is handed
    job = rq_queue.enqueue(func_path, *args, job_id=job_id, pipeline=pipe, **options)
    if job_id is not None:
        replace_failed(pipe, rq_queue, [job_id])
    pipe.execute()
    return str(job.id)


def replace_failed(pipeline: redis.client.Pipeline, rq_queue: Queue, job_ids: Sequence[str]) -> None:
    """Queue taking ``job_ids`` out of the queue's failed registry, on the transaction that enqueues them anew.

    A fixed job id queued again (the vector backfill's, an exchange's chunk job, a goal's) is a new run of the
    job: its hash is rewritten, and once it runs, its result becomes the id's latest, where RQ reads the
    failure's reason (``job.exc_info``; RQ's failed registry writes none into the hash). Left listed, the failed
    run would stay there for the failure TTL (a week) without its reason, its job finished or queued. RQ's own
    requeue of a failed job (``FailedJobRegistry.requeue``, the ops page's retry) takes it out the same way; a
    run that fails again is listed again, with its own reason.
    """
    if job_ids:
        pipeline.zrem(rq_queue.failed_job_registry.key, *job_ids)


def _enqueue_after(connection: redis.Redis, rq_queue: Queue, func_path: str, args: tuple[Any, ...],
                   job_id: str | None, after: list[str], options: dict[str, Any]) -> str | None:
    """``enqueue`` with ``after``: deferred behind those of ``after`` still pending, else queued.

    What RQ's ``depends_on`` does, in three round trips: WATCH the jobs' hashes, read their statuses,
    then defer (RQ's own dependency keys and deferred registry, so the worker that ends the last of
    them queues this one) or queue in one MULTI. A job that changes meanwhile (one ending) makes the
    MULTI fail and the whole step run again. RQ's way fetched and rebuilt every dependency job first.
    """
    own = [job_id] if job_id is not None else []
    keys = [Job.key_for(other) for other in [*own, *after]]
    timeout = options.pop("job_timeout", None)
    with connection.pipeline() as pipe:
        while True:
            try:
                pipe.watch(*keys)
                statuses = _statuses(pipe, [*own, *after])
                if own and statuses[0] in ACTIVE_STATUSES:
                    return None
                waits_for = [other for other, status in zip(after, statuses[len(own):], strict=True)
                             if status in ACTIVE_STATUSES]
                pipe.multi()
                if own:
                    replace_failed(pipe, rq_queue, own)
                job = rq_queue.create_job(
                    func_path, args=args, job_id=job_id, timeout=timeout,
                    depends_on=Dependency(jobs=waits_for, allow_failure=True) if waits_for else None,
                    status=JobStatus.DEFERRED if waits_for else JobStatus.QUEUED, **options)
                if waits_for:
                    job.register_dependency(pipeline=pipe)
                    job.save(pipeline=pipe)
                else:
                    rq_queue.enqueue_job(job, pipeline=pipe)
                pipe.execute()
                return str(job.id)
            except WatchError:
                continue


def owner_meta(user_id: str | None, **extra: Any) -> dict[str, Any]:
    """RQ ``meta`` for a job done on behalf of ``user_id`` (None: an operator job, owned by no user)."""
    meta = dict(extra)
    if user_id is not None:
        meta[OWNER_META_KEY] = user_id
    return meta


def job_owner(meta: dict[str, Any] | None) -> str | None:
    """The user a job was enqueued for, from its RQ ``meta``; None for operator jobs."""
    owner = (meta or {}).get(OWNER_META_KEY)
    return owner if isinstance(owner, str) else None


def load_request(connection: redis.Redis, request_id: str) -> ChatRequest | None:
    raw = connection.get(REQUEST_KEY % request_id)
    return ChatRequest.from_json(raw) if raw else None


class ThreadLease:
    """A renewable per-thread lock; the holder's token is unique per acquisition."""

    def __init__(self, connection: redis.Redis, thread_id: str, holder: str, ttl_ms: int = 15_000) -> None:
        self.connection = connection
        self.thread_id = thread_id
        self.key = LEASE_KEY % thread_id
        self.ttl_ms = ttl_ms
        self.token = uuid.uuid4().hex
        # The process holding it (``HELD_KEY``), so a supervisor that sees it die can lapse the lease at once.
        self.held_key = HELD_KEY % holder

    def extend(self) -> bool:
        return bool(self.connection.eval(_EXTEND, 1, self.key, self.token, self.ttl_ms))

    def claim(self, request_id: str) -> tuple[bool, str | None, bool]:
        """Try to take the lease and, in the same round trip, read the thread's pending head and
        whether ``request_id`` is finished: (acquired, head request id, finished)."""
        pipe = self.connection.pipeline(transaction=False)
        pipe.eval(_CLAIM_HELD, 2, self.key, self.held_key, self.token, self.ttl_ms)
        pipe.lindex(PENDING_KEY % self.thread_id, 0)
        pipe.exists(OUTPUT_KEY % request_id)
        acquired, head, finished = pipe.execute()
        return bool(acquired), head.decode() if isinstance(head, bytes) else head, bool(finished)

    def release(self, *, drop_pending: tuple[str, ...] | list[str] = ()) -> None:
        """Release the lease; first drop ``drop_pending`` from the thread's pending list, in the same transaction."""
        pipe = self.connection.pipeline(transaction=True)
        for request_id in drop_pending:
            pipe.lrem(PENDING_KEY % self.thread_id, 0, request_id)
        pipe.eval(DELETE_IF_HELD, 1, self.key, self.token)
        pipe.hdel(self.held_key, self.key)
        pipe.execute()


def note_held(pipeline: redis.client.Pipeline, holder: str, lease_key: str, token: str) -> None:
    """Queue noting that ``holder`` holds ``lease_key`` with ``token`` (on the pipeline that takes the lease)."""
    pipeline.hset(HELD_KEY % holder, lease_key, token)
    pipeline.expire(HELD_KEY % holder, HELD_TTL_S)


def forget_held(pipeline: redis.client.Pipeline, holder: str, lease_key: str) -> None:
    """Queue dropping the note (on the pipeline that releases the lease)."""
    pipeline.hdel(HELD_KEY % holder, lease_key)


def lapse_held(connection: redis.Redis, holder: str) -> list[str]:
    """``holder`` died: lapse every lease it still holds now (a lease some later holder took is left alone), as
    if each had reached its TTL; returns the lapsed lease keys. The jobs and threads wait no longer."""
    held = connection.hgetall(HELD_KEY % holder)
    lapsed = []
    for raw_key, token in held.items():
        key = raw_key.decode() if isinstance(raw_key, bytes) else str(raw_key)
        if connection.eval(DELETE_IF_HELD, 1, key, token):
            lapsed.append(key)
    connection.delete(HELD_KEY % holder)
    return lapsed


def pending_head(connection: redis.Redis, thread_id: str) -> str | None:
    head = connection.lindex(PENDING_KEY % thread_id, 0)
    return head.decode() if isinstance(head, bytes) else head


def remove_pending(connection: redis.Redis, thread_id: str, request_id: str) -> None:
    connection.lrem(PENDING_KEY % thread_id, 0, request_id)


def queue_attempt_count(pipeline: redis.client.Pipeline, request_id: str, ttl_s: int) -> None:
    """Count a processing attempt of a request, whichever job makes it, on the caller's pipeline: its first result
    (of two) is the attempt's number."""
    pipeline.incr(ATTEMPTS_KEY % request_id)
    pipeline.expire(ATTEMPTS_KEY % request_id, ttl_s)


def attempt_fence(request_id: str, attempt: int) -> tuple[str, str]:
    """The fence of a run: its events are written only while its attempt is the request's latest."""
    return ATTEMPTS_KEY % request_id, str(attempt)


def memory_job_options() -> dict[str, int]:
    """RQ options every memory job is enqueued with (a fresh dict: callers may add their own)."""
    return {"job_timeout": MEMORY_JOB_TIMEOUT_S, "result_ttl": MEMORY_RESULT_TTL_S,
            "failure_ttl": MEMORY_FAILURE_TTL_S}
