"""The ``schedule`` skill: reminders and scheduled prompts — create, list, move, cancel.

Due times are given the way the model can give them reliably (ISO local time, "tomorrow at 9",
"in 2 hours") and resolved against now in the person's zone; they are stored in UTC with the
zone, so the scheduler fires them at the right instant and computes recurrences on local time.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select

from services.act.models import SCHEDULE_KINDS, ScheduledItem
from services.act.recurrence import RecurrenceError, next_occurrence, normalize_rule
from services.act.skills.base import Arguments, Result, Skill, SkillContext, SkillError, clean_text, pick_target
from services.act.when import DueTime, DueTimeError, parse_due
from services.db import utcnow
from services.zones import zone_of

OPERATIONS = ("create", "list", "move", "cancel")

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {"type": "string", "enum": list(OPERATIONS)},
        "kind": {"type": "string", "enum": list(SCHEDULE_KINDS), "default": "reminder",
                 "description": "reminder: tell the person the text; prompt: run the text as a request then"},
        "text": {"type": "string", "minLength": 1, "maxLength": 500, "description": "what to remind about"},
        "due": {"type": "string", "minLength": 1, "maxLength": 80,
                "description": "when, in the person's local time: ISO like 2026-11-22T09:00, or 'tomorrow at 9', "
                               "'monday 8:30am', 'in 2 hours'"},
        "recurrence": {"type": "string", "maxLength": 120,
                       "description": "optional repeat: daily, weekdays, weekly, 'every monday', 'every 2 hours', "
                                      "FREQ=WEEKLY;BYDAY=MO,TH or CRON:0 9 * * 1-5"},
        "item_id": {"type": "integer", "minimum": 1, "description": "the item to move or cancel"},
        "match": {"type": "string", "minLength": 1, "maxLength": 200,
                  "description": "words of the item's text, when its id is not known"},
    },
    "required": ["operation"],
    "additionalProperties": False,
}


def run(ctx: SkillContext, args: Arguments) -> Result:
    """Create, list, move or cancel a reminder / scheduled prompt."""
    operation = args["operation"]
    if operation == "list":
        return {"items": [_view(ctx, item) for item in _active(ctx)]}
    if operation == "create":
        return _create(ctx, args)
    if operation == "move" and not args.get("due") and args.get("recurrence") is None:
        raise SkillError("needs_info", "when should it move to?", missing="the new time")
    item = _target(ctx, args)
    if operation == "cancel":
        item.status, item.updated_at = "cancelled", utcnow()
        ctx.session.flush()
        return {"cancelled": _view(ctx, item)}
    return _move(ctx, item, args)


def _create(ctx: SkillContext, args: Arguments) -> Result:
    if not args.get("text"):
        raise SkillError("needs_info", "what should the reminder say?", missing="what to be reminded about")
    text = clean_text(args["text"], ctx.config.skills.max_text_chars)
    due = _due(ctx, args.get("due"))
    recurrence = _recurrence(ctx, args.get("recurrence"), due)
    item = ScheduledItem(user_id=ctx.user_id, kind=args["kind"], text=text, due_at=due.utc, timezone=ctx.zone_name,
                         recurrence=recurrence, status="active", created_request_id=ctx.request_id)
    ctx.session.add(item)
    ctx.session.flush()
    return {"created": _view(ctx, item)}


def _move(ctx: SkillContext, item: ScheduledItem, args: Arguments) -> Result:
    zone = zone_of(item.timezone)
    due = _due(ctx, args["due"]) if args.get("due") else DueTime(item.due_at, item.due_at.astimezone(zone))
    if args.get("recurrence") is not None:
        item.recurrence = _recurrence(ctx, args["recurrence"], due)
    item.due_at, item.updated_at = due.utc, utcnow()
    ctx.session.flush()
    return {"moved": _view(ctx, item)}


def _due(ctx: SkillContext, spec: str | None) -> DueTime:
    if not spec:
        raise SkillError("needs_info", "when should it be due?", missing="the date and time")
    try:
        return parse_due(spec, ctx.now, ctx.zone, ctx.config.due)
    except DueTimeError as exc:
        # An hour not said, or a date in numbers that reads two ways ("12/03"): asked for, never guessed.
        code = "needs_info" if exc.code in ("missing_time", "ambiguous") else "invalid"
        missing = str(exc) if exc.code == "ambiguous" else "the time of day"
        raise SkillError(code, str(exc), missing=missing, zone=ctx.zone_name) from None


def _recurrence(ctx: SkillContext, raw: str | None, due: DueTime) -> str | None:
    if raw is None or not raw.strip() or raw.strip().lower() in ("none", "once", "never"):
        return None
    try:
        rule = normalize_rule(raw)
    except RecurrenceError as exc:
        raise SkillError("invalid", str(exc)) from None
    if next_occurrence(rule, due.local, due.utc, ctx.zone) is None:
        raise SkillError("invalid", f"the recurrence {rule} never repeats after {due.describe()}")
    return rule


def _active_query(ctx: SkillContext) -> Select[tuple[ScheduledItem]]:
    return (select(ScheduledItem).where(ScheduledItem.user_id == ctx.user_id, ScheduledItem.status == "active")
            .order_by(ScheduledItem.due_at, ScheduledItem.id))


def _active(ctx: SkillContext) -> list[ScheduledItem]:
    return list(ctx.session.scalars(_active_query(ctx)))


def _target(ctx: SkillContext, args: Arguments) -> ScheduledItem:
    return pick_target(ctx.session, _active_query(ctx), ScheduledItem.id, args.get("item_id"), args.get("match"),
                       label="active reminder", noun="reminder", view=lambda item: _view(ctx, item))


def _view(ctx: SkillContext, item: ScheduledItem) -> dict[str, Any]:
    zone = zone_of(item.timezone)
    due = DueTime(item.due_at, item.due_at.astimezone(zone))
    return {"id": item.id, "kind": item.kind, "text": item.text, "due_local": due.local.isoformat(timespec="minutes"),
            "due_utc": due.utc.isoformat(timespec="minutes"), "when": due.describe(), "timezone": item.timezone,
            "recurrence": item.recurrence, "status": item.status}


def describe(args: Arguments) -> str:
    """The operation in words, for a confirmation question."""
    operation = args["operation"]
    what = args.get("text") or args.get("match") or (f"item {args['item_id']}" if args.get("item_id") else "?")
    if operation == "create":
        repeat = f", repeating {args['recurrence']}" if args.get("recurrence") else ""
        return f"set a {args.get('kind', 'reminder')} \"{what}\" for {args.get('due', '?')}{repeat}"
    if operation == "move":
        return f"move the reminder \"{what}\" to {args.get('due', '?')}"
    return f"cancel the reminder \"{what}\"" if operation == "cancel" else "list your reminders"


SKILL = Skill(
    name="schedule",
    description="Reminders and scheduled prompts: create (text + due in the person's local time, optional "
                "recurrence), list the active ones, move one to a new time, or cancel one.",
    parameters=PARAMETERS,
    run=run,
    consequential=lambda args: args["operation"] != "list",
    destructive=lambda args: args["operation"] == "cancel",
    subject=lambda args: args.get("text") or args.get("match") or "",
    describe=describe,
)
