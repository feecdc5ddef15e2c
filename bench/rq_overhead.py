"""RQ's own cost per job: the worker's bookkeeping around a job that does nothing, and an enqueue.

A chat's digest job pays RQ's bookkeeping (dequeue, start, end, heartbeats) and the memory
jobs it queues pay ``services.queues.enqueue``. With a no-op job only that overhead is left,
so the CPU per job of the worker process and of Valkey is measured in isolation — steadier
than the whole pipeline on a shared machine. Compares RQ's plain ``SimpleWorker`` with
``EngramWorker`` (its bookkeeping only: no models, no database).

    python -m bench.rq_overhead [--jobs 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
from rq import Queue, SimpleWorker

from bench.cpu import _stat
from services.queues import enqueue, memory_job_options
from tests.servers import start_redis
from workers.startup import EngramWorker


class BareEngramWorker(EngramWorker):
    """EngramWorker's bookkeeping without its process context."""

    def work(self, *args: Any, **kwargs: Any) -> bool:
        return SimpleWorker.work(self, *args, **kwargs)


def cpu_s(pid: int) -> float:
    stat = _stat(pid)
    return stat[1] if stat is not None else 0.0


def measure_worker(connection: redis.Redis, server_pid: int, worker_class: type, jobs: int) -> tuple[float, float]:
    """(worker ms, Valkey ms) of CPU per no-op job, queued the way the web queues a digest job."""
    queue = Queue("overhead", connection=connection)
    for n in range(jobs):
        queue.enqueue("builtins.len", "x", job_id=f"noop-{n}", result_ttl=3600, failure_ttl=7 * 24 * 3600,
                      meta={"user_id": "u"})
    worker = worker_class([queue], connection=connection)
    started, server_started = time.process_time(), cpu_s(server_pid)
    worker.work(burst=True, max_jobs=jobs, logging_level="WARNING")  # as the roles run it
    used, server_used = time.process_time() - started, cpu_s(server_pid) - server_started
    connection.flushdb()
    return used * 1000 / jobs, server_used * 1000 / jobs


def measure_enqueue(connection: redis.Redis, server_pid: int, jobs: int) -> tuple[float, float]:
    """(caller ms, Valkey ms) of CPU per ``services.queues.enqueue`` with a job id (a chunk job's)."""
    started, server_started = time.process_time(), cpu_s(server_pid)
    for n in range(jobs):
        enqueue(connection, "overhead", "builtins.len", n, job_id=f"chunk-{n}", meta={"user_id": "u"},
                **memory_job_options())
    used, server_used = time.process_time() - started, cpu_s(server_pid) - server_started
    connection.flushdb()
    return used * 1000 / jobs, server_used * 1000 / jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_redis(Path(tmp) / "redis")
        try:
            connection = redis.Redis.from_url(server.url)
            server_pid = int(connection.info("server")["process_id"])
            measure_worker(connection, server_pid, BareEngramWorker, 100)  # warm-up
            for _ in range(args.rounds):  # interleaved, so both see the same machine
                for name, worker_class in (("rq SimpleWorker", SimpleWorker), ("EngramWorker", BareEngramWorker)):
                    worker_ms, server_ms = measure_worker(connection, server_pid, worker_class, args.jobs)
                    print(f"{name:<16} CPU per no-op job: worker {worker_ms:5.2f} ms, Valkey {server_ms:5.2f} ms")
                caller_ms, server_ms = measure_enqueue(connection, server_pid, args.jobs)
                print(f"{'enqueue(job_id)':<16} CPU per call:       caller {caller_ms:5.2f} ms,"
                      f" Valkey {server_ms:5.2f} ms")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
