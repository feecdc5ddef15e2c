"""Worker process start-up: settings, connections and models, then RQ's work loop.

``EngramWorker`` is a plain RQ ``SimpleWorker`` that builds the process context before
its loop and reports a heartbeat the supervisor watches. ``rq worker prompt-queue -u URL
-w workers.startup.EngramWorker`` runs it on any host; without ``-w`` the default worker
still works, loading the context on its first job.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from rq.worker import SimpleWorker

from services.connections import patient_retry
from services.janitor import job_lease
from services.logs import configure_logging
from services.settings import Settings
from services.supervisor import beat
from workers.process import context_from_environment, install_context

logger = logging.getLogger(__name__)

IDLE_HEARTBEAT_EVERY_S = 1.0


class EngramWorker(SimpleWorker):
    """SimpleWorker that preloads the context: one model load per process, not per job."""

    load_models = True
    _last_idle_heartbeat: tuple[float, int | None] = (float("-inf"), None)

    def work(self, *args: Any, **kwargs: Any) -> bool:
        # rq built this connection from the URL: make it ride over a Redis restart, so a job in
        # flight finishes instead of failing and taking the worker (and its loaded models) down.
        self.connection.set_retry(patient_retry())
        settings = Settings.from_env()
        configure_logging(settings.log_level, role=settings.role)
        install_context(context_from_environment(redis_client=self.connection, settings=settings,
                                                 load_models=self.load_models))
        beat(self.connection)
        return super().work(*args, **kwargs)

    def perform_job(self, job: Any, queue: Any) -> bool:
        # The lease lets the janitor recover this job within seconds if the process dies.
        with job_lease(self.connection, job.id):
            return super().perform_job(job, queue)

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        beat(self.connection)
        # RQ sends the same idle heartbeat (two round trips) after a job, before and after each
        # dequeue: one a second keeps the worker's key as alive. A heartbeat with another TTL
        # (a job starting) or inside RQ's own pipeline always goes through.
        now = time.monotonic()
        if pipeline is None and (now - self._last_idle_heartbeat[0] < IDLE_HEARTBEAT_EVERY_S
                                 and self._last_idle_heartbeat[1] == timeout):
            return
        super().heartbeat(timeout, pipeline)
        self._last_idle_heartbeat = (now, timeout) if pipeline is None else (float("-inf"), None)


class PeriodicWorker(EngramWorker):
    """The periodic-queue worker: short services that need no embedding model (and start in a second).

    What they would embed is queued for the chunker instead (see services/periodic/experience.py).
    """

    load_models = False
