"""The ``goal`` skill: record goals to pursue in the background, update their state and progress."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from services.act.models import GOAL_STATES, Goal
from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError, clean_text, pick_target
from services.db import utcnow

OPERATIONS = ("create", "update", "list")

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {"type": "string", "enum": list(OPERATIONS)},
        "text": {"type": "string", "minLength": 1, "maxLength": 500, "description": "the goal, for create"},
        "goal_id": {"type": "integer", "minimum": 1, "description": "the goal to update"},
        "match": {"type": "string", "minLength": 1, "maxLength": 200, "description": "words of the goal to update"},
        "state": {"type": "string", "enum": list(GOAL_STATES)},
        "note": {"type": "string", "minLength": 1, "maxLength": 500, "description": "a progress note to add"},
    },
    "required": ["operation"],
    "additionalProperties": False,
}


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Create, update or list goals."""
    operation = args["operation"]
    if operation == "list":
        query = select(Goal).where(Goal.user_id == ctx.user_id).order_by(Goal.state, Goal.updated_at.desc())
        return {"goals": [_view(goal) for goal in ctx.session.scalars(query)]}
    if operation == "create":
        if not args.get("text"):
            raise SkillError("needs_info", "what is the goal?", missing="what the goal is")
        goal = Goal(user_id=ctx.user_id, text=clean_text(args["text"], ctx.config.skills.max_text_chars),
                    state=args.get("state", "active"), progress=_notes(ctx, [], args.get("note")),
                    created_request_id=ctx.request_id)
        ctx.session.add(goal)
        ctx.session.flush()
        return {"created": _view(goal)}
    if not args.get("state") and not args.get("note"):
        raise SkillError("needs_info", "update needs a new state or a progress note", missing="what changed")
    goal = _target(ctx, args)
    if args.get("state"):
        goal.state = args["state"]
    goal.progress = _notes(ctx, list(goal.progress or []), args.get("note"))
    goal.updated_at = utcnow()
    ctx.session.flush()
    return {"updated": _view(goal)}


def _notes(ctx: SkillContext, progress: list[Any], note: str | None) -> list[Any]:
    if note:
        progress.append({"at": ctx.now.isoformat(timespec="seconds"),
                         "note": clean_text(note, ctx.config.skills.max_text_chars)})
    return progress


def _target(ctx: SkillContext, args: Arguments) -> Goal:
    goals = select(Goal).where(Goal.user_id == ctx.user_id).order_by(Goal.id)
    return pick_target(ctx.session, goals, Goal.id, args.get("goal_id"), args.get("match"), label="goal",
                       noun="goal", view=_view)


def _view(goal: Goal) -> dict[str, Any]:
    return {"id": goal.id, "text": goal.text, "state": goal.state, "progress": list(goal.progress or [])[-5:]}


def describe(args: Arguments) -> str:
    """The operation in words, for a confirmation question."""
    if args["operation"] == "create":
        return f"record the goal \"{args.get('text', '?')}\""
    if args["operation"] == "update":
        target = args.get("match") or f"goal {args.get('goal_id', '?')}"
        change = f"mark it {args['state']}" if args.get("state") else f"note \"{args.get('note', '')}\""
        return f"update {target}: {change}"
    return "list your goals"


SKILL = Skill(
    name="goal",
    description="Goals the person wants to pursue over time: create one (pursued in the background), update its "
                "state (active, paused, done, abandoned) or add a progress note, or list them.",
    parameters=PARAMETERS,
    run=run,
    consequential=lambda args: args["operation"] != "list",
    destructive=lambda args: args.get("state") == "abandoned",
    subject=lambda args: " ".join(filter(None, [args.get("text"), args.get("match"), args.get("note")])),
    describe=describe,
)
