"""Service functions for the periodic framework's tests, named by dotted path like real ones."""

from __future__ import annotations

from services.service_call import ServiceCall, ServiceResult

CALLS_KEY = "test:periodic:calls:%s"


def counting(call: ServiceCall) -> ServiceResult:
    """Counts its calls in Redis (per service name) and says it ran."""
    calls = call.context.redis.incr(CALLS_KEY % call.name)
    return ServiceResult.ran(calls=int(calls), at=call.now())


def gated(call: ServiceCall) -> ServiceResult:
    call.context.redis.incr(CALLS_KEY % call.name)
    return ServiceResult.skipped("quiet hours", quiet_until="07:00")


def boom(call: ServiceCall) -> ServiceResult:
    call.context.redis.incr(CALLS_KEY % call.name)
    raise RuntimeError("the service fell over")


def not_a_result(call: ServiceCall) -> str:
    return "done"


def schedules_file(tmp_path, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "schedules.toml"
    path.write_text(body)
    return path
