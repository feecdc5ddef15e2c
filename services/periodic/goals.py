"""Goals pursued in the background: each active goal gets a bounded ACT turn of its own.

The ``goals`` service only picks the goals due for a pursuit (none within ``min_interval_s``)
and queues one job per goal (``workers.periodic.pursue_goal``, job id ``goal-<id>``: one
pursuit of a goal at a time) on background-queue, never prompt-queue, so a chat never waits for
a goal and one goal's failure or slowness does not touch another. A pursuit runs the ACT loop
with its own, longer limits and the background skill set, appends a progress note to the goal
in the transaction of its skills' writes, then pushes a ``goal`` event with an idempotency key
per pursuit: a retried job finds its note and re-sends (at most once) instead of acting again.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import cast, select, update
from sqlalchemy.dialects.postgresql import JSONB

from services.act.models import Goal
from services.periodic.acting import run_background_turn
from services.queues import BACKGROUND_QUEUE, enqueue, owner_meta
from services.service_call import ServiceCall, ServiceResult
from services.streams import user_channel
from services.text import truncate

PURSUE_JOB = "workers.periodic.pursue_goal"
DEFAULT_MIN_INTERVAL_S = 6 * 3600
DEFAULT_WALL_CLOCK_S = 300.0
DEFAULT_MAX_ITERATIONS = 10
MAX_GOALS = 200
NOTE_CHARS = 1000
PROGRESS_SHOWN = 5


def run(call: ServiceCall) -> ServiceResult:
    """Queue a pursuit for every active goal not pursued within ``min_interval_s``."""
    now = call.now()
    interval = dt.timedelta(seconds=call.option("min_interval_s", DEFAULT_MIN_INTERVAL_S))
    with call.context.sessions() as session:
        goals = list(session.scalars(select(Goal).where(Goal.state == "active").order_by(Goal.id).limit(MAX_GOALS)))
    due = [goal for goal in goals if (last_pursuit(goal) or dt.datetime.min.replace(tzinfo=dt.UTC)) <= now - interval]
    if not due:
        return ServiceResult.skipped("no active goal is due for a pursuit", active=len(goals))
    wall_clock = call.option("wall_clock_s", DEFAULT_WALL_CLOCK_S)
    queued = sum(1 for goal in due if enqueue(
        call.context.redis, BACKGROUND_QUEUE, PURSUE_JOB, goal.id, call.fire_id, wall_clock,
        call.option("max_iterations", DEFAULT_MAX_ITERATIONS), job_id=f"goal-{goal.id}",
        job_timeout=int(wall_clock * 2 + 120), result_ttl=3600, failure_ttl=7 * 24 * 3600,
        meta=owner_meta(goal.user_id)))
    return ServiceResult.ran(active=len(goals), due=len(due), queued=queued)


def last_pursuit(goal: Goal) -> dt.datetime | None:
    times = [entry.get("at") for entry in goal.progress or [] if entry.get("kind") == "pursuit"]
    return dt.datetime.fromisoformat(max(times)) if times else None


def pursue(context: Any, goal_id: int, fire_id: str, *, now: dt.datetime, wall_clock_s: float,
           max_iterations: int) -> str:
    """One pursuit of one goal for this fire; returns what happened (``pursued``, ``resent``, ``skipped``)."""
    with context.sessions() as session:
        goal = session.get(Goal, goal_id)
        if goal is None or goal.state != "active":
            return "skipped"
        note = next((entry for entry in goal.progress or [] if entry.get("fire_id") == fire_id), None)
    if note is not None:  # this pursuit already acted and recorded; only the event may be missing
        push(context, goal, note)
        return "resent"
    with context.sessions.begin() as session:
        reply = run_background_turn(context, session, request_id=f"goal-{goal_id}-{fire_id}", user_id=goal.user_id,
                                    text=context.prompts.render("goal-pursuit", goal=goal.text,
                                                                progress=progress_text(goal)),
                                    now=now, wall_clock_s=wall_clock_s, max_iterations=max_iterations)
        actions = [entry for entry in reply.trail if entry.get("type") == "action"]
        note = {"at": now.isoformat(timespec="seconds"), "kind": "pursuit", "fire_id": fire_id,
                "note": truncate(reply.text, NOTE_CHARS), "actions": len(actions),
                "ok": sum(1 for entry in actions if entry.get("ok"))}
        # Appended in SQL, so a note the person adds meanwhile (the goal skill) is not overwritten.
        session.execute(update(Goal).where(Goal.id == goal_id)
                        .values(progress=Goal.progress.op("||")(_jsonb_list(note)), updated_at=now))
    push(context, goal, note)
    return "pursued"


def push(context: Any, goal: Goal, note: dict[str, Any]) -> None:
    data = {"goal_id": goal.id, "title": goal.text, "text": note["note"], "status": goal.state}
    _, fresh = context.events.publish_once(user_channel(goal.user_id), "goal", data,
                                           f"goal:{goal.id}:{note['fire_id']}")
    if fresh:
        context.metrics.inc("engram_proactive_events_total", {"kind": "goal"})


def progress_text(goal: Goal) -> str:
    entries = list(goal.progress or [])[-PROGRESS_SHOWN:]
    return "\n".join(f"- {entry.get('at', '')}: {entry.get('note', '')}" for entry in entries) or "(nothing yet)"


def _jsonb_list(entry: dict[str, Any]) -> Any:
    return cast([entry], JSONB)
