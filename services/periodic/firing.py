"""Turning a fire of a service into exactly one queued runner job.

Three guards keep a fire from running twice: a Redis ``SET NX`` per (service, fire id) across
schedulers (APScheduler itself has no cross-process lock), one RQ job id per service (a fire
that comes while the previous one is still queued or running is coalesced into it), and the
unique ``service_runs`` row the runner claims.
"""

from __future__ import annotations

import datetime as dt
import uuid

import redis

from services.periodic.schedules import ServiceSpec
from services.queues import enqueue

RUNNER_JOB = "workers.periodic.run"
FIRED_KEY = "engram:scheduler:fired:%s:%s"  # service, fire id → set once
FIRED_TTL_S = 24 * 3600
DEFAULT_TIMEOUT_S = 900
RESULT_TTL_S = 3600
FAILURE_TTL_S = 7 * 24 * 3600


def fire_id_for(spec: ServiceSpec, fire_time: dt.datetime) -> str:
    return f"{spec.name}@{fire_time.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}"


def fire_scheduled(connection: redis.Redis, spec: ServiceSpec, fire_time: dt.datetime) -> str:
    """Queue the runner for this scheduled fire; returns ``enqueued``, ``already fired`` or ``coalesced``."""
    fire_id = fire_id_for(spec, fire_time)
    if not connection.set(FIRED_KEY % (spec.name, fire_id), "1", nx=True, ex=FIRED_TTL_S):
        return "already fired"  # another scheduler (or an earlier tick of this one) took this fire
    job = enqueue(connection, spec.queue, RUNNER_JOB, spec.name, fire_id, fire_time.isoformat(), "schedule",
                  job_id=f"periodic-{spec.name}", **job_options(spec))
    return "enqueued" if job else "coalesced"


def fire_manual(connection: redis.Redis, spec: ServiceSpec, now: dt.datetime) -> str:
    """Queue a run now (``engram services run``), whatever schedule and switch say; returns its fire id."""
    fire_id = f"{spec.name}@manual-{now.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    enqueue(connection, spec.queue, RUNNER_JOB, spec.name, fire_id, now.isoformat(), "manual",
            job_id=f"periodic-{fire_id.replace('@', '-')}", **job_options(spec))
    return fire_id


def job_options(spec: ServiceSpec) -> dict[str, int]:
    timeout = spec.options.get("timeout_s", DEFAULT_TIMEOUT_S)
    return {"job_timeout": int(timeout), "result_ttl": RESULT_TTL_S, "failure_ttl": FAILURE_TTL_S}
