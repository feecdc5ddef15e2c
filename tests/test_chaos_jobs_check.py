"""The chaos soak's end check of jobs (bench/chaos_checks.py ``_jobs``): it waits for what the workers really do.

A run that holds its lease is alive and is waited for, however slowly a niced worker goes on a loaded machine
(the check took a live run still listed 15 s after a fixed 300 s drain for stuck: "job chunk-205 still started",
seen once in a full-suite run beside a model bench). A run listed as started without its lease long after its
worker died is a lost job and is still named. Simulated on fakeredis with a virtual clock: no waiting, no timing.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import fakeredis
import pytest
import redis
from rq.registry import StartedJobRegistry

from bench import chaos_checks
from services.janitor import LEASE_KEY
from services.queues import MEMORY_CHUNKER_QUEUE

QUEUE_KEY = f"rq:queue:{MEMORY_CHUNKER_QUEUE}"


class SlowWorker:
    """One worker that takes its queue's jobs in turn and runs each for ``job_s`` of virtual time, holding its
    lease; ``dies_at``: it is killed then, its run left listed without a lease; ``handed_on_after``: the janitor
    takes that run out of the registry this long after the death (None: never)."""

    def __init__(self, connection: fakeredis.FakeRedis, job_s: float, dies_at: float | None = None,
                 handed_on_after: float | None = None) -> None:
        self.connection, self.job_s, self.dies_at, self.handed_on_after = connection, job_s, dies_at, handed_on_after
        self.registry = StartedJobRegistry(MEMORY_CHUNKER_QUEUE, connection=connection)
        self.running: tuple[str, float] | None = None  # (registry entry, when it ends)

    def at(self, now: float) -> None:
        if self.dies_at is not None and now >= self.dies_at:
            if self.running is not None:  # killed mid-job: the supervisor lapses its lease at once
                self.connection.delete(LEASE_KEY % self.running[0])
                self.running = (self.running[0], float("inf"))
            if self.handed_on_after is not None and now >= self.dies_at + self.handed_on_after:
                self.connection.delete(self.registry.key)
            return
        if self.running is not None and now >= self.running[1]:
            self.connection.zrem(self.registry.key, self.running[0])
            self.connection.delete(LEASE_KEY % self.running[0])
            self.running = None
        if self.running is None and (job_id := self.connection.lpop(QUEUE_KEY)) is not None:
            member = f"{job_id.decode()}:run1"
            self.connection.zadd(self.registry.key, {member: time.time() + 3600})  # RQ's horizon: job timeout + 60 s
            self.connection.set(LEASE_KEY % member, "token")  # a run's lease (services/janitor.py)
            self.running = (member, now + self.job_s)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A fake Redis the check connects to and a virtual clock that moves the worker on whenever the check sleeps."""
    connection = fakeredis.FakeRedis()
    clock = SimpleNamespace(now=0.0, worker=None)

    def sleep(seconds: float) -> None:
        clock.now += seconds
        clock.worker.at(clock.now)

    monkeypatch.setattr(chaos_checks, "time", SimpleNamespace(monotonic=lambda: clock.now, sleep=sleep,
                                                              time=time.time))
    monkeypatch.setattr(redis.Redis, "from_url", classmethod(lambda cls, url, **kw: connection))

    def start(jobs: int, **worker: float | None) -> tuple[list[str], str]:
        connection.rpush(QUEUE_KEY, *[f"chunk-{n}" for n in range(jobs)])
        clock.worker = SlowWorker(connection, **worker)  # type: ignore[arg-type]
        clock.worker.at(0.0)
        return chaos_checks._jobs(SimpleNamespace(urls=("redis://fake", "")))  # type: ignore[arg-type]

    return SimpleNamespace(start=start, clock=clock, connection=connection)


def test_a_slow_worker_still_catching_up_is_waited_for_not_called_stuck(world) -> None:  # type: ignore[no-untyped-def]
    # Fourteen jobs of 30 s each: the worker is busy for 420 s, past the old check's fixed 300 s drain.
    problems, summary = world.start(14, job_s=30.0)
    assert problems == [], summary
    assert world.clock.now >= 420 and world.connection.llen(QUEUE_KEY) == 0


def test_a_run_left_started_by_a_dead_worker_and_never_handed_on_is_named(world) -> None:  # type: ignore[no-untyped-def]
    problems, _ = world.start(2, job_s=5.0, dies_at=7.0)
    assert problems == [f"{MEMORY_CHUNKER_QUEUE}: job chunk-1 still started without its lease after "
                        f"{chaos_checks.RECOVERY_S:.0f} s (its worker died and nobody handed it on)"]


def test_a_dead_workers_run_handed_on_by_the_janitor_is_no_problem(world) -> None:  # type: ignore[no-untyped-def]
    problems, summary = world.start(1, job_s=60.0, dies_at=7.0, handed_on_after=2.0)
    assert problems == [], summary


def test_a_worker_that_stops_taking_jobs_is_named_when_the_wait_ends(world) -> None:  # type: ignore[no-untyped-def]
    # Dead before its first job ends, the job handed on but the worker never back: the queue never empties.
    problems, _ = world.start(4, job_s=5.0, dies_at=1.0, handed_on_after=1.0)
    assert problems == [f"3 job(s) still queued after {chaos_checks.DRAIN_CAP_S:.0f} s: the workers did not catch up"]
