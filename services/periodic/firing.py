"""Turning a fire of a service into exactly one queued runner job.

Three guards keep a fire from running twice: a Redis ``SET NX`` per (service, fire id) across
schedulers (APScheduler itself has no cross-process lock), one RQ job id per fire (and a fire that
comes while the service's latest job is still queued or running is coalesced into it), and the
unique ``service_runs`` row the runner claims. The job id is the fire's, not the service's: a job
that failed keeps its own hash, traceback and place in the failed registry when the next fire comes
(with one id per service the next fire's job replaced the failed one's hash under the same id).
"""

from __future__ import annotations

import datetime as dt
import uuid

import redis

from services.periodic.schedules import ServiceSpec
from services.queues import enqueue, job_active

RUNNER_JOB = "workers.periodic.run"
FIRED_KEY = "engram:scheduler:fired:%s:%s"  # service, fire id → set once
FIRED_TTL_S = 24 * 3600
LATEST_JOB_KEY = "engram:scheduler:job:%s"  # service → its latest scheduled fire's job id (what a fire coalesces into)
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
    latest = connection.get(LATEST_JOB_KEY % spec.name)
    if latest is not None and job_active(connection, latest.decode()):
        return "coalesced"
    job_id = enqueue(connection, spec.queue, RUNNER_JOB, spec.name, fire_id, fire_time.isoformat(), "schedule",
                     job_id=job_id_for(fire_id), **job_options(spec))
    if job_id is None:
        return "coalesced"  # this fire's own job is still queued (a fire id taken again after its key expired)
    connection.set(LATEST_JOB_KEY % spec.name, job_id, ex=FIRED_TTL_S)
    return "enqueued"


def fire_manual(connection: redis.Redis, spec: ServiceSpec, now: dt.datetime) -> str:
    """Queue a run now (``engram services run``), whatever schedule and switch say; returns its fire id."""
    fire_id = f"{spec.name}@manual-{now.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    enqueue(connection, spec.queue, RUNNER_JOB, spec.name, fire_id, now.isoformat(), "manual",
            job_id=job_id_for(fire_id), **job_options(spec))
    return fire_id


def job_id_for(fire_id: str) -> str:
    """The RQ job id of one fire: ``periodic-reminders-20261128T231500Z``."""
    return f"periodic-{fire_id.replace('@', '-')}"


def job_options(spec: ServiceSpec) -> dict[str, int]:
    timeout = spec.options.get("timeout_s", DEFAULT_TIMEOUT_S)
    return {"job_timeout": int(timeout), "result_ttl": RESULT_TTL_S, "failure_ttl": FAILURE_TTL_S}
