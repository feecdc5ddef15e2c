"""Job leases, the recovery of jobs whose worker died mid-job, and prompt retries.

RQ notices a dead worker's job only when the job's registry entry expires (job timeout +
60 s, minutes for a chat). Engram's workers keep a short lease per run instead (RQ lists each
run of a job on its own); when a lease lapses, the janitor hands the job back to RQ's own
abandoned-job path (which retries it while retries are left and runs its failure callback
otherwise), or, when the job has been run again meanwhile (its id queued twice), only takes the
dead run out of the registry.

A retry waits in RQ's scheduled registry until some RQ scheduler moves it onto its queue.
RQ runs that scheduler in a process forked by whichever ``--with-scheduler`` worker got the
queue's lock, and a worker that starts while the lock is held tries again only at its
10-minute maintenance pass. Measured here: a ``kill -9`` of such a worker leaves its forked
scheduler running as an orphan (one leaked process per crash, alive after ``engram run``
stops), and when the lock holder does die (its host, or the orphan) retries sit for up to
ten minutes. So Engram's workers run no scheduler; ``ScheduledMover`` does it for every queue
from the scheduler role's leader, every second, under RQ's own per-queue lock (a plain
``rq worker --with-scheduler`` elsewhere coexists), and it takes over a lock whose holder
stopped heart-beating instead of waiting for the lock to lapse.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import redis
from rq import Queue
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.timeouts import TimerDeathPenalty
from rq.utils import utcparse

from services.queues import ALL_QUEUES, forget_held, note_held

logger = logging.getLogger(__name__)

# Per run of a job: its entry in RQ's started registry, "<job id>:<execution id>" (RQ lists each run on its own).
LEASE_KEY = "engram:joblease:%s"  # exists while a worker is alive and running the run
OWNED_KEY = "engram:jobowned:%s"  # marks runs of Engram's workers (plain rq workers have no lease)
LEASE_TTL_S = 10
# RQ's schedulers write a heartbeat every second; one this old belongs to a dead process.
STALE_SCHEDULER_S = 10.0


@dataclass(eq=False)
class _Renewal:
    renew: Callable[[], bool]
    every_s: float
    name: str
    active: bool = True
    running: bool = False
    # The holder is releasing what is renewed (its body's last step): a renewal that then finds it gone stops
    # quietly, since that is the release and not a loss.
    released: bool = False

    def releasing(self) -> None:
        self.released = True


class _Renewer:
    """The process's one renewal thread: it runs every registered renewal when it is due.

    A digest job holds two leases (its job's and its thread's); a thread of their own each meant
    two thread starts and joins per chat, each a few context switches on a busy machine.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: list[tuple[float, int, _Renewal]] = []
        self._order = itertools.count()  # ties in the heap never compare renewals
        self._thread: threading.Thread | None = None
        self._pid = 0

    def add(self, renewal: _Renewal) -> None:
        with self._changed:
            self._schedule(renewal)
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._pid = os.getpid()  # a forked child has the parent's object but not its thread
                self._thread = threading.Thread(target=self._run, name="lease renewals", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def remove(self, renewal: _Renewal, wait_s: float = 1.0) -> None:
        """Stop renewing; waits (briefly) for a renewal of it that is running right now."""
        deadline = time.monotonic() + wait_s
        with self._changed:
            renewal.active = False
            while renewal.running and time.monotonic() < deadline:
                self._changed.wait(max(0.0, deadline - time.monotonic()))

    def _schedule(self, renewal: _Renewal) -> None:
        heapq.heappush(self._due, (time.monotonic() + renewal.every_s, next(self._order), renewal))

    def _next(self) -> _Renewal:
        with self._changed:
            while True:
                while self._due and not self._due[0][2].active:
                    heapq.heappop(self._due)
                if not self._due:
                    self._changed.wait()
                    continue
                wait_s = self._due[0][0] - time.monotonic()
                if wait_s > 0:
                    self._changed.wait(wait_s)
                    continue
                renewal = heapq.heappop(self._due)[2]
                renewal.running = True
                return renewal

    def _run(self) -> None:
        while True:
            renewal = self._next()
            keep = True
            try:
                if not renewal.renew():
                    if not renewal.released:
                        logger.warning("%s: lost; no longer renewing", renewal.name)
                    keep = False
            except redis.RedisError:
                logger.warning("%s: could not renew (Redis error); trying again", renewal.name)
            except Exception:  # the thread serves every renewal of the process: it must not die of one
                logger.exception("%s: renewal failed; no longer renewing", renewal.name)
                keep = False
            with self._changed:
                renewal.running = False
                if keep and renewal.active:
                    self._schedule(renewal)
                else:
                    renewal.active = False
                self._changed.notify_all()


_RENEWER = _Renewer()


@contextmanager
def renewed(renew: Callable[[], bool], every_s: float, name: str) -> Iterator[Callable[[], None]]:
    """Call ``renew`` every ``every_s`` while the body runs (from the process's renewal thread); it stops
    when renew says False, warning that what it renewed is lost.

    Yields ``releasing``: a body that releases what is renewed before it ends calls it first, so a renewal
    falling between the release and the body's end stops without that warning (a worker drops its run's
    lease inside RQ's end-of-job transaction, a moment before the job's renewal stops).

    The thread dies with the process, so whatever it renews lapses when a worker is killed.
    """
    renewal = _Renewal(renew, every_s, name)
    _RENEWER.add(renewal)
    try:
        yield renewal.releasing
    finally:
        _RENEWER.remove(renewal)


# KEYS: lease, owned; ARGV: token, ttl. Renew our lease, or take it back if it lapsed while nobody
# else took the job (the janitor deletes the owned mark when it hands the job on).
_RENEW_LEASE = """
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('get', KEYS[2]) == ARGV[1]) then
  redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
end
return 0
"""
# KEYS: lease, owned; ARGV: token. Release only what is still ours: a run that outlived its lease
# must not release the lease of the run that took its job over.
_RELEASE_LEASE = """
for _, key in ipairs(KEYS) do
  if redis.call('get', key) == ARGV[1] then redis.call('del', key) end
end
return 1
"""


# KEYS: started registry, owned, lease, job hash; ARGV: registry member (a run), expired score, the job's id, the
# owned marks' key prefix. A run of an Engram worker without a lease is over. If it was the job's
# one run, mark its entry expired, so RQ's cleanup treats the job as abandoned exactly as it would after the long
# registry timeout (retried or failed, its callback run): returns 1. If the job has moved on (another run of it is
# listed as ours, or its status is no longer "started": a later run ended, or it waits to run again), the entry is
# only the dead run's leftover: drop it and hand nothing on (a second hand-on would run or fail the job twice):
# returns 2. Either way the owned mark goes (handed on once).
_MARK_ABANDONED = """
if not redis.call('zscore', KEYS[1], ARGV[1]) or redis.call('exists', KEYS[2]) == 0
   or redis.call('exists', KEYS[3]) == 1 then
  return 0
end
redis.call('del', KEYS[2])
local moved_on = redis.call('hget', KEYS[4], 'status') ~= 'started'
local prefix = ARGV[3] .. ':'
if not moved_on then
  for _, other in ipairs(redis.call('zrange', KEYS[1], 0, -1)) do
    if other ~= ARGV[1] and string.sub(other, 1, #prefix) == prefix
       and redis.call('exists', ARGV[4] .. other) == 1 then
      moved_on = true
      break
    end
  end
end
if moved_on then
  redis.call('zrem', KEYS[1], ARGV[1])
  return 2
end
redis.call('zadd', KEYS[1], ARGV[2], ARGV[1])
return 1
"""


def hold_lease(pipeline: redis.client.Pipeline, run: str, token: str, holder: str, ttl_s: int = LEASE_TTL_S) -> None:
    """Queue taking the lease of ``run`` (its started-registry entry) with its token on the caller's pipeline (a
    worker's job-start transaction). ``holder``: the process running it (services.queues.HELD_KEY), whose supervisor
    lapses the lease the moment it dies: the janitor's next pass (a second) hands the job on, not the TTL."""
    pipeline.set(LEASE_KEY % run, token, ex=ttl_s)
    pipeline.set(OWNED_KEY % run, token, ex=24 * 3600)
    note_held(pipeline, holder, LEASE_KEY % run, token)


def drop_lease(pipeline: redis.client.Pipeline, run: str, token: str, holder: str) -> None:
    """Queue releasing the run's lease on the caller's pipeline (the transaction that records the job's end);
    what is no longer the run's token stays."""
    pipeline.eval(_RELEASE_LEASE, 2, LEASE_KEY % run, OWNED_KEY % run, token)
    forget_held(pipeline, holder, LEASE_KEY % run)


def renewing_lease(connection: redis.Redis, run: str, token: str,
                   ttl_s: int = LEASE_TTL_S) -> contextlib.AbstractContextManager[Callable[[], None]]:
    """Renew the run's lease while the body runs; it stops once the janitor handed the run's job on (a renewal
    just after the lease was dropped finds neither lease nor owned mark and takes nothing). Yields ``releasing``
    (see ``renewed``): call it before the transaction that drops the lease."""
    keys = (LEASE_KEY % run, OWNED_KEY % run)
    return renewed(lambda: bool(connection.eval(_RENEW_LEASE, 2, *keys, token, ttl_s)), ttl_s / 3, f"lease {run}")


def recover_abandoned(connection: redis.Redis, queue_names: tuple[str, ...] = ALL_QUEUES) -> list[str]:
    """Return abandoned jobs to RQ: retried if retries are left, failed (with callback) if not. A dead run of a
    job that has moved on (run again meanwhile) only leaves the registry."""
    recovered: list[str] = []
    for name in queue_names:
        # Timer-based death penalty: the janitor runs off the main thread, where RQ's default
        # SIGALRM penalty cannot be installed (and the failure callback would never run).
        registry = StartedJobRegistry(queue=Queue(name, connection=connection), death_penalty_class=TimerDeathPenalty)
        expired_now = time.time() - 1
        found = len(recovered)
        for member in connection.zrange(registry.key, 0, -1):
            run = member.decode() if isinstance(member, bytes) else member
            job_id = registry.parse_job_id(run)
            # One script: a job that ends meanwhile (its end transaction takes its run out of the registry
            # and drops lease and mark together) must not look abandoned. Checked in separate round
            # trips, a job ending between the two looks exactly so, and a finished job was retried
            # or failed (in bursts: several a minute).
            marked = connection.eval(_MARK_ABANDONED, 4, registry.key, OWNED_KEY % run, LEASE_KEY % run,
                                     Job.key_for(job_id), run, expired_now, job_id, OWNED_KEY % "")
            if marked == 1:
                recovered.append(job_id)
            elif marked == 2:
                logger.warning("a dead run of job %s left the started registry (the job has moved on)", job_id)
        if len(recovered) > found:
            registry.cleanup()
    if recovered:
        logger.warning("recovered %d abandoned job(s): %s", len(recovered), ", ".join(recovered))
    return recovered


class ScheduledMover:
    """Moves due retries and delayed jobs of every queue onto their queues, as RQ's scheduler would.

    Call ``tick()`` about once a second from one process (the scheduler role's leader).
    """

    def __init__(self, connection: redis.Redis, queue_names: tuple[str, ...] = ALL_QUEUES) -> None:
        self.connection = connection
        self.queue_names = queue_names
        self.scheduler = RQScheduler(list(queue_names), connection=connection, name=f"engram-{uuid.uuid4().hex}",
                                     logging_level=logging.WARNING)

    def tick(self) -> set[str]:
        """Take free or abandoned queue locks, enqueue what is due; returns the queues this process serves."""
        for name in self.queue_names:
            self._break_if_abandoned(name)
        owned = self.scheduler.acquire_locks()  # acquires free locks and refreshes ours
        self.scheduler.register_birth()  # our heartbeat, so others can tell we are alive
        self.scheduler.enqueue_scheduled_jobs()
        return owned

    def _break_if_abandoned(self, queue_name: str) -> None:
        lock_key = RQScheduler.get_locking_key(queue_name)
        holder = self.connection.get(lock_key)
        if holder is None:
            return
        holder_name = holder.decode() if isinstance(holder, bytes) else str(holder)
        if holder_name == self.scheduler.name or self._alive(holder_name):
            return
        if release_lock(self.connection, lock_key, holder_name):
            logger.warning("queue %s: scheduler %s stopped heart-beating; taking over its lock", queue_name,
                           holder_name)

    def _alive(self, scheduler_name: str) -> bool:
        raw = self.connection.hget(SCHEDULER_KEY_TEMPLATE % scheduler_name, "last_heartbeat")
        if raw is None:
            return False
        last = utcparse(raw.decode() if isinstance(raw, bytes) else raw)
        if last.tzinfo is None:
            last = last.replace(tzinfo=UTC)
        return (datetime.now(UTC) - last).total_seconds() < STALE_SCHEDULER_S
