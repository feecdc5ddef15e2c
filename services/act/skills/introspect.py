"""The ``introspect`` skill: what the assistant knows about the person and about itself — no LLM call."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from services.act.models import Goal, ScheduledItem, active_reminder_count, list_counts
from services.act.skills.base import Arguments, Result, Skill, SkillContext
from services.memory.models import Episode, Fact

MAX_FACTS = 30

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "about": {"type": "string", "enum": ["person", "self", "all"], "default": "all",
                  "description": "person: facts, memories, lists, reminders, goals; self: the assistant's skills"},
    },
    "additionalProperties": False,
}


def run(ctx: SkillContext, args: Arguments) -> Result:
    """What is known about the person and/or the assistant itself."""
    result: Result = {}
    if args["about"] in ("person", "all"):
        result["person"] = _person(ctx)
    if args["about"] in ("self", "all"):
        result["assistant"] = {"skills": ctx.catalog, "time_zone": ctx.zone_name}
    return result


def _person(ctx: SkillContext) -> dict[str, Any]:
    session, user = ctx.session, ctx.user_id
    facts = session.scalars(
        select(Fact.text).where(Fact.user_id == user, Fact.superseded_at.is_(None))
        .order_by(Fact.salience.desc(), Fact.updated_at.desc()).limit(MAX_FACTS)
    ).all()
    fact_count = session.scalar(select(func.count()).where(Fact.user_id == user, Fact.superseded_at.is_(None)))
    episodes = session.scalar(select(func.count()).select_from(Episode).where(Episode.user_id == user))
    latest = session.scalars(select(Episode.title).where(Episode.user_id == user)
                             .order_by(Episode.created_at.desc()).limit(3)).all()
    reminders = session.scalars(
        select(ScheduledItem).where(ScheduledItem.user_id == user, ScheduledItem.status == "active")
        .order_by(ScheduledItem.due_at).limit(5)
    ).all()
    goals = session.execute(select(Goal.text, Goal.state).where(Goal.user_id == user, Goal.state != "abandoned")
                            .order_by(Goal.updated_at.desc()).limit(10)).all()
    return {
        "facts": list(facts), "fact_count": fact_count,
        "episode_count": episodes, "recent_episodes": list(latest),
        "lists": [{"name": name, "items": count} for name, count in list_counts(session, user)],
        "active_reminders": active_reminder_count(session, user),
        "next_reminders": [{"text": item.text, "due_local": item.due_at.astimezone(ctx.zone).isoformat(
            timespec="minutes")} for item in reminders],
        "goals": [{"text": text, "state": state} for text, state in goals],
    }


SKILL = Skill(
    name="introspect",
    description="What you know about the person (facts, how many memories, lists, reminders, goals) and about "
                "yourself (your skills). Reads only; no arguments needed.",
    parameters=PARAMETERS,
    run=run,
)
