"""EngramWorker batches RQ's per-job bookkeeping: what RQ records must still all be there."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from rq import Queue, Retry, get_current_job
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry
from rq.suspension import resume, suspend
from rq.worker import SimpleWorker, WorkerStatus

from services.janitor import LEASE_KEY, OWNED_KEY, ScheduledMover
from services.jobs import enqueue_jobs
from services.queues import enqueue
from workers.memory_chunker import reschedule
from workers.startup import EngramWorker


class BareEngramWorker(EngramWorker):
    """EngramWorker's bookkeeping without its process context (no models, no database)."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        return SimpleWorker.work(self, *args, **kwargs)


def seen_while_running() -> dict[str, Any]:
    """A job that reports what Redis says about it and its worker while it runs."""
    job = get_current_job()
    assert job is not None
    connection = job.connection
    worker_key = f"rq:worker:{job.worker_name}"
    registry = StartedJobRegistry(job.origin, connection=connection)
    runs = [run.decode() for run in connection.zrange(registry.key, 0, -1)]  # "<job id>:<execution id>"
    return {
        "lease": [bool(connection.exists(LEASE_KEY % run)) for run in runs],
        "owned": [bool(connection.exists(OWNED_KEY % run)) for run in runs],
        "started": [registry.parse_job_id(run) for run in runs] == [job.id],
        "status": connection.hget(job.key, "status").decode(),
        "worker_state": connection.hget(worker_key, "state").decode(),
        "current_job": connection.hget(worker_key, "current_job").decode(),
    }


def fails() -> None:
    raise RuntimeError("this job fails")


def run(connection: Any, func: str, retry: Retry | None = None) -> tuple[Job, BareEngramWorker]:
    queue = Queue("bookkeeping", connection=connection)
    job = queue.enqueue(func, retry=retry, result_ttl=600)
    worker = BareEngramWorker([queue], connection=connection)
    worker.work(burst=True)
    job.refresh()
    return job, worker


@pytest.mark.integration
def test_a_job_runs_with_its_lease_and_ends_with_rqs_records_complete(real_redis) -> None:
    job, worker = run(real_redis, "tests.test_worker_bookkeeping.seen_while_running")
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value() == {"lease": [True], "owned": [True], "started": True, "status": "started",
                                  "worker_state": WorkerStatus.BUSY, "current_job": job.id}
    assert job.id in FinishedJobRegistry("bookkeeping", connection=real_redis).get_job_ids()
    assert StartedJobRegistry("bookkeeping", connection=real_redis).count == 0
    assert job.last_heartbeat is not None and job.ended_at is not None
    assert real_redis.keys(LEASE_KEY % "*") == [] and real_redis.keys(OWNED_KEY % "*") == []
    worker.refresh()
    assert worker.successful_job_count == 1


@pytest.mark.integration
def test_a_failed_job_is_recorded_failed_and_a_retried_one_requeued_without_a_lease(real_redis) -> None:
    failed, _ = run(real_redis, "tests.test_worker_bookkeeping.fails")
    assert failed.get_status() == JobStatus.FAILED
    assert failed.id in FailedJobRegistry("bookkeeping", connection=real_redis).get_job_ids()
    assert "this job fails" in (failed.latest_result().exc_string or "")
    assert real_redis.keys(LEASE_KEY % "*") == [] and real_redis.keys(OWNED_KEY % "*") == []

    queue = Queue("bookkeeping", connection=real_redis)
    retried = queue.enqueue("tests.test_worker_bookkeeping.fails", retry=Retry(max=1))
    BareEngramWorker([queue], connection=real_redis).work(burst=True, max_jobs=1)
    retried.refresh()
    assert retried.get_status() == JobStatus.QUEUED and retried.retries_left == 0
    assert retried.id in queue.get_job_ids()
    assert StartedJobRegistry("bookkeeping", connection=real_redis).count == 0
    assert real_redis.keys(LEASE_KEY % "*") == []


@pytest.mark.integration
def test_the_worker_is_recorded_idle_without_a_current_job_after_one(real_redis) -> None:
    job, worker = run(real_redis, "tests.test_worker_bookkeeping.seen_while_running")
    recorded = {key.decode(): value.decode() for key, value in real_redis.hgetall(worker.key).items()}
    assert recorded["state"] == WorkerStatus.IDLE
    assert "current_job" not in recorded
    assert recorded["successful_job_count"] == "1"


@pytest.mark.integration
def test_a_suspended_worker_takes_no_job(real_redis) -> None:
    suspend(real_redis)
    try:
        job, _ = run(real_redis, "tests.test_worker_bookkeeping.seen_while_running")
    finally:
        resume(real_redis)
    assert job.get_status() == JobStatus.QUEUED


@pytest.mark.integration
def test_a_job_queued_after_others_runs_once_they_end_done_or_failed(real_redis) -> None:
    """``enqueue(after=...)`` (an episode after its chunks): deferred while they wait, queued by the
    worker that ends the last of them, whether it succeeded or failed."""
    queue = Queue("bookkeeping", connection=real_redis)
    done = queue.enqueue("tests.test_worker_bookkeeping.seen_while_running", job_id="first", result_ttl=600)
    failing = queue.enqueue("tests.test_worker_bookkeeping.fails", job_id="second")
    job_id = enqueue(real_redis, "bookkeeping", "builtins.len", "abc", job_id="after-both",
                     after=["first", "second", "never-enqueued"])
    assert job_id == "after-both"
    waiting = Job.fetch(job_id, connection=real_redis)
    assert waiting.get_status() == JobStatus.DEFERRED and job_id not in queue.get_job_ids()
    assert enqueue(real_redis, "bookkeeping", "builtins.len", "abc", job_id=job_id) is None  # not twice

    BareEngramWorker([queue], connection=real_redis).work(burst=True, max_jobs=1)
    assert Job.fetch(done.id, connection=real_redis).get_status() == JobStatus.FINISHED
    assert waiting.get_status(refresh=True) == JobStatus.DEFERRED  # one of the two still to run
    BareEngramWorker([queue], connection=real_redis).work(burst=True)
    assert Job.fetch(failing.id, connection=real_redis).get_status() == JobStatus.FAILED
    assert waiting.get_status(refresh=True) == JobStatus.FINISHED and waiting.return_value() == 3


@pytest.mark.integration
def test_a_job_after_finished_or_unknown_jobs_is_queued_at_once(real_redis) -> None:
    queue = Queue("bookkeeping", connection=real_redis)
    queue.enqueue("builtins.len", "ab", job_id="earlier", result_ttl=600)
    BareEngramWorker([queue], connection=real_redis).work(burst=True)
    job_id = enqueue(real_redis, "bookkeeping", "builtins.len", "abc", job_id="later", after=["earlier", "gone"])
    assert Job.fetch(job_id, connection=real_redis).get_status() == JobStatus.QUEUED
    assert queue.get_job_ids() == ["later"]


def test_renewals_run_at_their_own_pace_stop_when_lost_and_never_after_the_body() -> None:
    import threading
    import time

    from services.janitor import renewed

    calls: dict[str, int] = {"fast": 0, "lost": 0}
    threads: set[int] = set()

    def counted(name: str, keep: bool) -> bool:
        calls[name] += 1
        threads.add(threading.get_ident())
        return keep

    with renewed(lambda: counted("fast", True), 0.05, "fast"), renewed(lambda: counted("lost", False), 0.05, "lost"):
        time.sleep(0.5)
    after = dict(calls)
    time.sleep(0.2)
    assert calls == after, "a renewal ran after its body ended"
    assert calls["fast"] >= 2  # again and again while the body runs
    assert calls["lost"] == 1  # renew said False: never called again
    assert len(threads) == 1 and threading.get_ident() not in threads  # one side thread serves both


@pytest.mark.integration
def test_a_job_queued_after_one_that_ends_while_it_is_being_deferred_is_queued_not_stranded(real_redis, redis_server,
                                                                                             monkeypatch) -> None:
    """The dependency's status is read under WATCH: if it ends before the deferral is written, the
    deferral is not written (the worker that ended it would never queue this one) and the job is queued."""
    from redis import Redis

    queue = Queue("bookkeeping", connection=real_redis)
    first = queue.enqueue("builtins.len", "ab", job_id="ends-meanwhile", result_ttl=600)
    create_job = Queue.create_job
    ended: list[bool] = []

    def ending_meanwhile(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not ended:  # another worker finishes the dependency right now
            other = Redis.from_url(redis_server.url)  # another worker's connection
            BareEngramWorker([Queue("bookkeeping", connection=other)], connection=other).work(burst=True)
            ended.append(True)
        return create_job(self, *args, **kwargs)

    monkeypatch.setattr(Queue, "create_job", ending_meanwhile)
    job_id = enqueue(real_redis, "bookkeeping", "builtins.len", "abc", job_id="after-it", after=[first.id])
    assert Job.fetch(first.id, connection=real_redis).get_status() == JobStatus.FINISHED
    assert Job.fetch(job_id, connection=real_redis).get_status() == JobStatus.QUEUED
    assert queue.get_job_ids() == ["after-it"]


class _Metrics:
    def flush(self) -> None:
        pass


class _Context:
    metrics = _Metrics()


def test_a_worker_freezes_what_it_loaded_before_its_first_job(real_redis, monkeypatch) -> None:
    # A full collection would otherwise walk the models' objects (~170k in a digest worker, ~105 ms)
    # in the middle of some reply; they live as long as the process.
    import gc

    import workers.startup as startup

    monkeypatch.setattr(startup, "context_from_environment", lambda **_: _Context())
    monkeypatch.setattr(startup, "install_context", lambda context: None)
    gc.unfreeze()
    try:
        EngramWorker([Queue("bookkeeping", connection=real_redis)], connection=real_redis).work(burst=True)
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


def _queue_again(connection: Any, way: str, job_id: str) -> None:
    """Queue ``job_id`` (a fixed id, as Engram's memory jobs have) again by one of the ways Engram does."""
    if way == "enqueue":
        enqueue(connection, "bookkeeping", "builtins.len", "abc", job_id=job_id)
    elif way == "after":  # an episode after its chunks
        enqueue(connection, "bookkeeping", "builtins.len", "abc", job_id=job_id, after=["gone"])
    elif way == "import":
        enqueue_jobs(connection, "bookkeeping", "builtins.len", [("abc", job_id)], "ann")
    else:  # a memory job rescheduled after an LLM failure: its "-retry1" id
        reschedule(SimpleNamespace(redis=connection), "bookkeeping", "builtins.print", "abc", 0, (0,),
                   job_id.removesuffix("-retry1"), user_id="ann")
        ScheduledMover(connection, ("bookkeeping",)).tick()


@pytest.mark.integration
@pytest.mark.parametrize("way", ["enqueue", "after", "import", "reschedule"])
def test_a_failed_job_queued_again_by_its_id_leaves_the_failed_list(real_redis, way: str) -> None:
    """The failed registry lists only failed runs, each with its reason: a fixed id queued again is a new run
    (the chaos soak found a killed backfill's id still listed once its next run had finished, its reason gone)."""
    queue, registry = Queue("bookkeeping", connection=real_redis), FailedJobRegistry("bookkeeping",
                                                                                      connection=real_redis)
    enqueue(real_redis, "bookkeeping", "tests.test_worker_bookkeeping.fails", job_id="fixed-retry1")
    BareEngramWorker([queue], connection=real_redis).work(burst=True)
    assert registry.get_job_ids() == ["fixed-retry1"]
    _queue_again(real_redis, way, "fixed-retry1")
    assert registry.get_job_ids() == [] and queue.get_job_ids() == ["fixed-retry1"]
    BareEngramWorker([queue], connection=real_redis).work(burst=True)
    job = Job.fetch("fixed-retry1", connection=real_redis)
    assert job.get_status() == JobStatus.FINISHED and registry.get_job_ids() == []
