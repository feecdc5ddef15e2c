"""Run one fire of a periodic service: claim it once, call its function, record how it went.

The RQ job (``workers/periodic.py``) hands over the worker's context; everything else is
here so tests and ``engram services run`` use the same path. A job path that cannot be
imported (a service not built yet, a typo) is a ``failed`` run with the import error as its
reason; it never takes the worker down.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from datetime import datetime

from services.periodic.runs import claim_run, finish_run, run_outcome
from services.periodic.schedules import ServiceSpec
from services.service_call import ServiceCall, ServiceFunction, ServiceResult, WorkerContext, system_clock

logger = logging.getLogger(__name__)


class JobUnavailable(Exception):
    """The service's job path does not name an importable function."""


def resolve_job(path: str) -> ServiceFunction:
    """The function a dotted path names, or ``JobUnavailable`` saying why not."""
    module_name, _, attribute = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise JobUnavailable(f"job {path} cannot be imported: {exc}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise JobUnavailable(f"job {path}: module {module_name} has no function {attribute!r}")
    return function  # type: ignore[no-any-return]


def execute(context: WorkerContext, spec: ServiceSpec, fire_id: str, *, trigger: str = "schedule",
            scheduled_for: datetime | None = None,
            clock: Callable[[], datetime] = system_clock) -> ServiceResult:
    """Run the fire once; a fire already claimed elsewhere returns its recorded (or running) outcome."""
    if not claim_run(context.sessions, spec.name, fire_id, trigger=trigger, scheduled_for=scheduled_for,
                     now=clock()):
        return _recorded(context, spec.name, fire_id)
    started = time.monotonic()
    try:
        result = _call(context, spec, fire_id, clock)
    except Exception as exc:
        _record(context, spec, fire_id, ServiceResult("failed", f"{type(exc).__name__}: {exc}"), started, clock)
        raise  # RQ keeps the traceback in its failed-job registry
    _record(context, spec, fire_id, result, started, clock)
    return result


def _call(context: WorkerContext, spec: ServiceSpec, fire_id: str,
          clock: Callable[[], datetime]) -> ServiceResult:
    try:
        function = resolve_job(spec.job)
    except JobUnavailable as exc:
        return ServiceResult("failed", str(exc))
    result = function(ServiceCall(name=spec.name, fire_id=fire_id, context=context, clock=clock,
                                  options=dict(spec.options)))
    if not isinstance(result, ServiceResult):
        return ServiceResult("failed", f"job {spec.job} returned {type(result).__name__}, not a ServiceResult")
    return result


def _record(context: WorkerContext, spec: ServiceSpec, fire_id: str, result: ServiceResult, started: float,
            clock: Callable[[], datetime]) -> None:
    elapsed = time.monotonic() - started
    finish_run(context.sessions, spec.name, fire_id, result, duration_ms=int(elapsed * 1000), now=clock())
    context.metrics.inc("engram_service_runs_total", {"service": spec.name, "outcome": result.outcome})
    context.metrics.observe("engram_service_seconds", elapsed, {"service": spec.name})
    log = logger.warning if result.outcome == "failed" else logger.info
    log("service %s fire %s: %s%s", spec.name, fire_id, result.outcome, f" ({result.reason})" if result.reason else "",
        extra={"service": spec.name, "fire_id": fire_id, "outcome": result.outcome, "duration_ms": int(elapsed * 1000),
               "details": result.details})


def _recorded(context: WorkerContext, name: str, fire_id: str) -> ServiceResult:
    with context.sessions() as session:
        row = run_outcome(session, name, fire_id)
    if row is None or row.outcome == "running":
        return ServiceResult.skipped("this fire is already running elsewhere")
    return ServiceResult(row.outcome, row.reason, {"already_recorded": True, **(row.details or {})})  # type: ignore[arg-type]
