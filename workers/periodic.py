"""The periodic runner job: one fire of one service, by name and fire id (idempotent).

The scheduler enqueues ``workers.periodic.run`` on the service's queue; the worker's context
(connections, LLM client, models loaded once) becomes the service's ``ServiceCall``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from services.periodic.runner import execute
from services.periodic.runs import claim_run, finish_run
from services.periodic.schedules import load_schedules, schedules_path
from services.service_call import ServiceResult
from workers.process import current_context


def run(name: str, fire_id: str, scheduled_for: str | None = None, trigger: str = "schedule") -> str:
    """RQ entry point: run ``name`` for ``fire_id`` unless that fire already ran; returns the outcome."""
    context = current_context()
    spec = load_schedules(schedules_path(context.settings)).get(name)
    when = datetime.fromisoformat(scheduled_for) if scheduled_for else None
    if spec is None:
        # Renamed or removed from schedules.toml after this job was queued: say so where people look.
        result = ServiceResult("failed", f"no service named {name!r} in {schedules_path(context.settings).name}")
        now = datetime.now(UTC)
        if claim_run(context.sessions, name, fire_id, trigger=trigger, scheduled_for=when, now=now):
            finish_run(context.sessions, name, fire_id, result, duration_ms=0, now=now)
        return result.outcome
    return execute(context, spec, fire_id, trigger=trigger, scheduled_for=when).outcome


def pursue_goal(goal_id: int, fire_id: str, wall_clock_s: float, max_iterations: int) -> str:
    """RQ entry point of one goal's pursuit (queued by the ``goals`` service, job id ``goal-<id>``)."""
    from services.periodic.goals import pursue

    return pursue(current_context(), goal_id, fire_id, now=datetime.now(UTC), wall_clock_s=wall_clock_s,
                  max_iterations=max_iterations)
