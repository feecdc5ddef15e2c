"""Worker process start-up: settings, connections and models, then RQ's work loop.

``EngramWorker`` is a plain RQ ``SimpleWorker`` that builds the process context before
its loop and reports a heartbeat the supervisor watches. ``rq worker prompt-queue -u URL
-w workers.startup.EngramWorker`` runs it on any host; without ``-w`` the default worker
still works, loading the context on its first job.

It also does RQ's per-job bookkeeping in fewer round trips (the digest worker's share of a
chat's CPU): every key, registry entry and state RQ writes is still written, only batched.
- Starting a job: RQ's two transactions (the execution record and worker state, then the job's
  started state) and Engram's job lease are one transaction.
- Ending it: the lease is dropped, and the worker marked idle and heart-beaten, inside RQ's own
  end-of-job transaction (success, failure or retry); RQ's separate write of the job's
  ``last_heartbeat`` is left out (the end transaction saves the job hash with it).
- The idle bookkeeping RQ repeats around every dequeue (worker state ``idle`` written again,
  a heartbeat before and after each dequeue) is written when it changes something or a
  second has passed, and ``rq suspend`` is looked for at most once a second (a suspension
  stops the worker taking jobs within a second instead of before the very next one).
"""

from __future__ import annotations

import contextlib
import gc
import time
import uuid
from collections.abc import Callable
from typing import Any

from rq.executions import Execution
from rq.utils import now
from rq.worker import SimpleWorker, WorkerStatus

from services.connections import patient_retry
from services.janitor import drop_lease, hold_lease, renewing_lease
from services.logs import configure_logging
from services.settings import Settings
from services.supervisor import beat, process_key
from workers.process import context_from_environment, install_context

IDLE_HEARTBEAT_EVERY_S = 1.0


class EngramWorker(SimpleWorker):
    """SimpleWorker that preloads the context: one model load per process, not per job."""

    load_models = True
    # (monotonic time, TTL) of the last heartbeat written, and the last state written.
    _last_heartbeat_written: tuple[float, int] = (float("-inf"), 0)
    _state_written: str | None = None
    _lease_token = ""  # the running job's lease token (set in perform_job)
    _lease_renewal: contextlib.ExitStack | None = None  # renews the run's lease until the job's end (perform_job)
    _lease_releasing: Callable[[], None] | None = None  # tells that renewal the lease is being dropped
    _suspension_checked_at: float = float("-inf")

    def work(self, *args: Any, **kwargs: Any) -> bool:
        # rq built this connection from the URL: make it ride over a Redis restart, so a job in
        # flight finishes instead of failing and taking the worker (and its loaded models) down.
        self.connection.set_retry(patient_retry())
        settings = Settings.from_env()
        configure_logging(settings.log_level, role=settings.role)
        context = context_from_environment(redis_client=self.connection, settings=settings,
                                           load_models=self.load_models)
        install_context(context)
        beat(self.connection)
        # The models and everything loaded with them live as long as the process: frozen, the collector
        # stops walking them. A full collection of a digest worker's ~170k objects took ~105 ms, about once
        # in 150 jobs: a pause in some reply and ~0.6 ms of CPU per job on average (bench/pipeline.py).
        gc.freeze()
        try:
            return super().work(*args, **kwargs)
        finally:  # a stopping worker writes the metrics its last second of jobs recorded
            context.metrics.flush()

    def execute_job(self, job: Any, queue: Any) -> None:
        # SimpleWorker's, without its prepare_execution(): prepare_job_execution() below does it.
        self.perform_job(job, queue)
        self.set_state(WorkerStatus.IDLE)

    def perform_job(self, job: Any, queue: Any) -> bool:
        # The lease (taken in the start transaction) lets the janitor recover this job within
        # seconds if the process dies. It is the run's (RQ lists each run of a job on its own), and
        # carries this run's token: a run that outlives it (a long Redis outage let the janitor hand
        # the job on) neither renews nor drops anything of the next run's.
        self._lease_token = uuid.uuid4().hex
        with contextlib.ExitStack() as renewal:
            self._lease_renewal = renewal  # prepare_job_execution starts the renewal once the run is listed
            try:
                return super().perform_job(job, queue)
            finally:
                self._lease_renewal = self._lease_releasing = None

    def prepare_job_execution(self, job: Any, remove_from_intermediate_queue: bool = False) -> None:
        """RQ's prepare_execution() and prepare_job_execution() and the run's lease, in one transaction."""
        heartbeat_ttl = self.get_heartbeat_ttl(job)
        with self.connection.pipeline() as pipeline:
            self.execution = Execution.create(job, heartbeat_ttl, pipeline=pipeline, worker_name=self.name)
            self.set_state(WorkerStatus.BUSY, pipeline=pipeline)
            hold_lease(pipeline, self.execution.composite_key, self._lease_token, holder=process_key())
            self.set_current_job_id(job.id, pipeline=pipeline)
            self.set_current_job_working_time(0, pipeline=pipeline)
            self.heartbeat(heartbeat_ttl, pipeline=pipeline)
            job.heartbeat(now(), heartbeat_ttl, pipeline=pipeline)
            job.prepare_for_execution(self.name, pipeline=pipeline)
            if remove_from_intermediate_queue:
                pipeline.lrem(self.queue_class(job.origin, connection=self.connection).intermediate_queue_key, 1,
                              job.id)
            pipeline.execute()
        if self._lease_renewal is not None:
            self._lease_releasing = self._lease_renewal.enter_context(
                renewing_lease(self.connection, self.execution.composite_key, self._lease_token))
        self.procline(f"Processing {job.func_name} from {job.origin} since {time.time()}")

    def handle_execution_ended(self, job: Any, queue: Any, heartbeat_ttl: int) -> None:
        # RQ writes the job's last_heartbeat here in a round trip of its own; the end transaction
        # saves the job hash, this field included.
        job.ended_at = job.last_heartbeat = now()

    def cleanup_execution(self, job: Any, pipeline: Any) -> None:
        # Called inside RQ's end-of-job transaction on every path (success, failure, retry).
        run = self.execution.composite_key if self.execution is not None else None
        super().cleanup_execution(job, pipeline)
        if run is not None:
            if self._lease_releasing is not None:
                # The renewal goes on until perform_job returns: one falling after this transaction finds the
                # lease dropped, which is the job's end, not a lost lease.
                self._lease_releasing()
            drop_lease(pipeline, run, self._lease_token, holder=process_key())
        self.set_state(WorkerStatus.IDLE, pipeline=pipeline)
        self.heartbeat(pipeline=pipeline)

    def check_for_suspension(self, burst: bool) -> None:
        moment = time.monotonic()
        if moment - self._suspension_checked_at < IDLE_HEARTBEAT_EVERY_S:
            return
        super().check_for_suspension(burst)
        self._suspension_checked_at = time.monotonic()

    def set_state(self, state: str, pipeline: Any = None) -> None:
        if pipeline is None and state == self._state_written:
            self._state = state  # already in Redis: RQ writes "idle" again before every dequeue
            return
        super().set_state(state, pipeline)
        self._state_written = state

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        beat(self.connection)
        # RQ sends the same heartbeat (two commands) after a job, before and after each dequeue
        # and with each suspension check: one a second with the same TTL keeps the worker's key
        # as alive. A heartbeat with another TTL (a job starting, the worker going idle) goes through.
        ttl = timeout or self.worker_ttl + 60
        moment = time.monotonic()
        last_at, last_ttl = self._last_heartbeat_written
        if moment - last_at < IDLE_HEARTBEAT_EVERY_S and last_ttl == ttl:
            return
        super().heartbeat(timeout, pipeline)
        self._last_heartbeat_written = (moment, ttl)


class PeriodicWorker(EngramWorker):
    """The periodic-queue worker: short services that need no embedding model (and start in a second).

    What they would embed is queued for the chunker instead (see services/periodic/experience.py).
    """

    load_models = False
