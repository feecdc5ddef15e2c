""""lease …: lost" is logged only when a run's lease is really lost, not after the run's own normal end.

A worker renews its run's lease from the process's renewal thread until the job is over; the lease is dropped
inside RQ's end-of-job transaction, a moment before that renewal stops. A renewal falling in between found the
lease gone and warned "lease <run>: lost; no longer renewing" after a job that had simply ended (seen in the
workers' logs after ordinary chat and chunk jobs). A run that stalls while its job is handed on must still warn.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue
from rq.job import JobStatus
from rq.registry import StartedJobRegistry

from services.janitor import LEASE_KEY, LEASE_TTL_S, recover_abandoned
from services.queues import lapse_held
from services.supervisor import process_key
from tests.servers import wait_until
from tests.test_dead_run_leftover import QUEUE, BareEngramWorker
from tests.test_worker_bookkeeping import fails

ROOT = Path(__file__).resolve().parents[1]
LOST = ": lost; no longer renewing"


def fine() -> str:
    return "done"


class LeaseWatch(redis.Redis):
    """The worker's connection: notes each renewal of a run's lease (the renewal thread's one script call)."""

    renewed = threading.Event()

    def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any:  # type: ignore[override]
        try:
            return super().eval(script, numkeys, *keys_and_args)
        finally:
            if numkeys and str(keys_and_args[0]).startswith(LEASE_KEY % ""):
                self.renewed.set()


class EndWatchingWorker(BareEngramWorker):
    """Holds the moment after the job's end was recorded (its lease dropped) open until a renewal comes."""

    window_seen = False

    def _hold_after_end(self) -> None:
        LeaseWatch.renewed.clear()
        self.window_seen = LeaseWatch.renewed.wait(LEASE_TTL_S)  # renewals come every LEASE_TTL_S / 3

    def handle_job_success(self, *args: Any, **kwargs: Any) -> None:
        super().handle_job_success(*args, **kwargs)
        self._hold_after_end()

    def handle_job_failure(self, *args: Any, **kwargs: Any) -> None:
        super().handle_job_failure(*args, **kwargs)
        self._hold_after_end()


@pytest.mark.integration
@pytest.mark.parametrize("func", ["fine", "fails"])
def test_a_job_that_ends_normally_logs_no_lost_lease(real_redis, func: str, caplog) -> None:
    connection = LeaseWatch(connection_pool=real_redis.connection_pool)
    queue = Queue(QUEUE, connection=connection)
    job = queue.enqueue({"fine": fine, "fails": fails}[func])
    worker = EndWatchingWorker([queue], connection=connection)
    with caplog.at_level("WARNING"):
        worker.work(burst=True)
    assert worker.window_seen, "no renewal came between the job's end and the end of its renewal"
    assert job.get_status() == (JobStatus.FINISHED if func == "fine" else JobStatus.FAILED)
    assert [r.getMessage() for r in caplog.records if LOST in r.getMessage()] == []


_STALLED_WORKER = """
import redis, sys
from rq import Queue
from tests.test_dead_run_leftover import BareEngramWorker, QUEUE
connection = redis.Redis.from_url(sys.argv[1])
BareEngramWorker([Queue(QUEUE, connection=connection)], connection=connection).work(burst=True, max_jobs=1)
"""


@pytest.mark.integration
def test_a_run_stalled_while_its_job_was_handed_on_still_warns_that_its_lease_is_lost(real_redis, redis_server,
                                                                                      tmp_path) -> None:
    queue = Queue(QUEUE, connection=real_redis)
    queue.enqueue("tests.test_dead_run_leftover.chunk", job_id="chunk-206")
    registry = StartedJobRegistry(queue=queue)
    log = tmp_path / "stalled.log"
    with log.open("wb") as stderr:
        stalled = subprocess.Popen([sys.executable, "-c", _STALLED_WORKER, redis_server.url], cwd=ROOT, stderr=stderr,
                                   env={**os.environ, "PYTHONPATH": str(ROOT), "ENGRAM_TEST_BLOCK": "1"})
    try:
        assert wait_until(lambda: registry.get_job_ids(cleanup=False) == ["chunk-206"], timeout=60)
        stalled.send_signal(signal.SIGSTOP)  # frozen: its renewal thread too, so its lease lapses
        lapse_held(real_redis, process_key(stalled.pid))
        assert recover_abandoned(real_redis, (QUEUE,)) == ["chunk-206"]  # the janitor hands the job on
        stalled.send_signal(signal.SIGCONT)  # it wakes still running the job whose lease it lost
        assert wait_until(lambda: LOST in log.read_text(), timeout=30), log.read_text()[-2000:]
    finally:
        stalled.kill()
        stalled.wait()
    assert "lease chunk-206:" in log.read_text()
