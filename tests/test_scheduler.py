"""Scheduler leadership and the janitor's recovery of dead workers' jobs."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import fakeredis
import pytest
from rq import Callback, Queue, Retry
from rq.job import JobStatus
from rq.registry import StartedJobRegistry

from services.janitor import LEASE_KEY, OWNED_KEY, recover_abandoned
from services.streams import EventLog, request_channel
from tests.leases import job_lease
from workers.scheduler import Leadership


def test_only_one_scheduler_leads_and_a_standby_takes_over():
    connection = fakeredis.FakeRedis()
    first, second = Leadership(connection), Leadership(connection)
    assert first.hold() and first.hold()
    assert not second.hold()
    connection.delete("engram:scheduler:leader")  # the leader died and its lease lapsed
    assert second.hold() and not first.hold()


def test_job_lease_exists_while_running_and_is_removed_after():
    connection = fakeredis.FakeRedis()
    with job_lease(connection, "job-1", ttl_s=2):
        assert connection.exists(LEASE_KEY % "job-1") and connection.exists(OWNED_KEY % "job-1")
    assert not connection.exists(LEASE_KEY % "job-1")


def _started(connection, job_id: str, retries: int):  # type: ignore[no-untyped-def]
    queue = Queue("prompt-queue", connection=connection)
    job = queue.enqueue("builtins.print", job_id, job_id=job_id, retry=Retry(max=retries) if retries else None,
                        on_failure=Callback("workers.request_failure.on_failure"))
    queue.remove(job.id)
    registry = StartedJobRegistry(queue=queue)
    connection.zadd(registry.key, {f"{job.id}:exec1": time.time() + 3600})
    job.set_status(JobStatus.STARTED)
    connection.set(OWNED_KEY % f"{job.id}:exec1", "1")  # an Engram worker ran it, then died: no lease
    return queue, registry


@pytest.mark.integration
def test_abandoned_job_with_retries_goes_back_to_the_queue(real_redis):
    queue, registry = _started(real_redis, "job-a", retries=2)
    assert recover_abandoned(real_redis, ("prompt-queue",)) == ["job-a"]
    assert "job-a" in queue.get_job_ids()
    assert registry.count == 0


@pytest.mark.integration
def test_abandoned_job_without_retries_fails_and_runs_its_callback(real_redis):
    queue, _ = _started(real_redis, "job-b", retries=0)
    # Off the main thread, like the scheduler's housekeeping job.
    worker = threading.Thread(target=recover_abandoned, args=(real_redis, ("prompt-queue",)))
    worker.start()
    worker.join(timeout=10)
    assert queue.fetch_job("job-b").get_status() == JobStatus.FAILED
    # The digest's failure callback ran: the client of request "job-b" got error + done.
    events = EventLog(real_redis).read_after(request_channel("job-b"), None)
    assert [e.event for e in events] == ["error", "done"]


# Run in a fresh interpreter, as the scheduler role is: which modules a digest job's failure callback loads.
_CALLBACK_IMPORTS = """
import sys
import fakeredis
import workers.scheduler
from rq import Queue
from services.queues import PROMPT_QUEUE, ChatRequest, submit_chat
connection = fakeredis.FakeRedis()
pipe = connection.pipeline(transaction=True)
pipe.multi()
request = ChatRequest("r1", "u1", "t1", "hi", "api", 0.0)
submit_chat(connection, request, ttl_s=60, timeout_s=60, retries=0, pipeline=pipe)
pipe.execute()
before = set(sys.modules)
assert callable(Queue(PROMPT_QUEUE, connection=connection).fetch_job("digest-r1").failure_callback)
print(" ".join(sorted(set(sys.modules) - before)))
"""


def test_the_scheduler_runs_a_digest_jobs_failure_callback_without_loading_the_digest():
    # The janitor hands a dead worker's job to RQ, which imports the job's failure callback in the scheduler: the
    # soak's scheduler grew 71 -> 115 MiB at its first abandoned digest job when that meant all of workers.digest.
    loaded = subprocess.run([sys.executable, "-c", _CALLBACK_IMPORTS], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert loaded, "the callback was imported before the job asked for it: the test measures nothing"
    heavy = [name for name in loaded if name.split(".")[0] in {"numpy", "openai", "onnxruntime", "tokenizers"}
             or name.startswith(("workers.digest", "workers.generation", "services.memory"))]
    assert heavy == []


@pytest.mark.integration
def test_live_jobs_and_foreign_jobs_are_left_alone(real_redis):
    queue, registry = _started(real_redis, "job-c", retries=1)
    real_redis.set(LEASE_KEY % "job-c:exec1", "1", ex=10)  # still alive
    assert recover_abandoned(real_redis, ("prompt-queue",)) == []
    real_redis.delete(OWNED_KEY % "job-c:exec1", LEASE_KEY % "job-c:exec1")  # run by a plain rq worker: RQ's rules
    assert recover_abandoned(real_redis, ("prompt-queue",)) == []
    assert registry.count == 1


class _JobEndsWhileLookedAt:
    """A connection on which the running job ends just after the janitor's first look at it, as its
    worker's end transaction would: out of the started registry, lease and mark dropped, finished."""

    def __init__(self, real, registry, job_id: str) -> None:  # type: ignore[no-untyped-def]
        self._real, self._registry, self._job_id, self._ended = real, registry, job_id, False

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        attribute = getattr(self._real, name)
        if name in ("zrange", "zadd") or not callable(attribute):
            return attribute

        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            result = attribute(*args, **kwargs)
            if not self._ended:
                self._ended = True
                pipe = self._real.pipeline()
                pipe.zrem(self._registry.key, f"{self._job_id}:exec1")
                pipe.delete(LEASE_KEY % f"{self._job_id}:exec1", OWNED_KEY % f"{self._job_id}:exec1")
                pipe.hset(f"rq:job:{self._job_id}", "status", JobStatus.FINISHED)
                pipe.execute()
            return result

        return call


@pytest.mark.integration
def test_a_job_that_ends_while_the_janitor_looks_is_not_taken_for_abandoned(real_redis):
    queue, registry = _started(real_redis, "job-d", retries=1)
    real_redis.set(LEASE_KEY % "job-d:exec1", "1", ex=10)  # alive, and about to end
    assert recover_abandoned(_JobEndsWhileLookedAt(real_redis, registry, "job-d"), ("prompt-queue",)) == []
    assert registry.count == 0 and "job-d" not in queue.get_job_ids()
    assert queue.fetch_job("job-d").get_status() == JobStatus.FINISHED
