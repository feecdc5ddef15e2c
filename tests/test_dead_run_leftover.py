"""A killed worker's run of a job whose id another run took over: its entry in RQ's started registry goes at the
janitor's next pass, and the job is not handed on a second time (services/janitor.py).

RQ lists one entry per run of a job; the job's lease and owned mark were kept per job id. So when a later run of
the same id started before the janitor's pass (the id queued twice: a chunk job queued by the digest and by the
thread expiry), the dead run looked alive while the later one held the lease, and once that one ended (taking
lease and mark with it) the dead run's entry was nobody's: listed as started until RQ's own horizon (job timeout
+ 60 s: 12 minutes for a memory job), the ops page and the queue depth showing a job running that had ended.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rq import Queue, Retry, get_current_job
from rq.job import JobStatus
from rq.registry import StartedJobRegistry
from rq.worker import SimpleWorker

from services.janitor import recover_abandoned
from services.queues import lapse_held
from services.supervisor import process_key
from tests.servers import wait_until
from workers.startup import EngramWorker

QUEUE = "leftover-queue"
ROOT = Path(__file__).resolve().parents[1]


class BareEngramWorker(EngramWorker):
    """EngramWorker's bookkeeping without its process context (no models, no database)."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        return SimpleWorker.work(self, *args, **kwargs)


def chunk() -> list[str]:
    """The job: in the worker that gets killed it blocks; in the later run it lets the janitor look meanwhile."""
    if os.environ.get("ENGRAM_TEST_BLOCK"):
        while True:
            signal.pause()
    job = get_current_job()
    assert job is not None
    return recover_abandoned(job.connection, (QUEUE,))


_KILLED_WORKER = """
import redis, sys
from rq import Queue
from tests.test_dead_run_leftover import BareEngramWorker, QUEUE
connection = redis.Redis.from_url(sys.argv[1])
BareEngramWorker([Queue(QUEUE, connection=connection)], connection=connection).work(burst=True, max_jobs=1)
"""


@pytest.mark.integration
def test_a_dead_runs_entry_goes_and_its_job_runs_once_when_a_later_run_took_the_id(real_redis, redis_server) -> None:
    queue = Queue(QUEUE, connection=real_redis)
    for _ in range(2):  # the same id queued twice
        queue.enqueue("tests.test_dead_run_leftover.chunk", job_id="chunk-205", retry=Retry(max=2, interval=[5, 30]))
    registry = StartedJobRegistry(queue=queue)
    killed = subprocess.Popen([sys.executable, "-c", _KILLED_WORKER, redis_server.url], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "ENGRAM_TEST_BLOCK": "1"})
    try:
        assert wait_until(lambda: registry.get_job_ids(cleanup=False) == ["chunk-205"], timeout=60)
    finally:
        killed.kill()
        killed.wait()
    lapse_held(real_redis, process_key(killed.pid))  # what the supervisor does when it sees the death

    # Before the janitor's next pass, the second copy runs; the janitor looks while it runs, and after.
    BareEngramWorker([queue], connection=real_redis).work(burst=True)
    job = queue.fetch_job("chunk-205")
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value() == [], "the job was handed on while a later run of it was running"
    assert recover_abandoned(real_redis, (QUEUE,)) == []
    assert registry.get_job_ids(cleanup=False) == [], "the dead run's entry is still listed as started"
    assert queue.get_job_ids() == [] and queue.scheduled_job_registry.get_job_ids() == []
    assert job.get_status() == JobStatus.FINISHED and job.retries_left == 2
