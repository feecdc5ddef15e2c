"""The texts the ACT loop sends: skill catalogue, world state, trail, the step and reply prompts."""

from __future__ import annotations

import json
from datetime import datetime, tzinfo
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.act.compaction import PromptState, entry_line
from services.act.dispatcher import ActDispatcher
from services.act.models import Goal, active_reminder_count, list_counts
from services.prompts import fenced
from services.text import truncate

ENTRY_CHARS = 1500
NO_TRAIL = "(none yet)"


def skills_text(dispatcher: ActDispatcher) -> str:
    """The catalogue: one paragraph per skill with its arguments."""
    blocks = []
    for skill in dispatcher.skills.values():
        properties = skill.parameters.get("properties", {})
        required = set(skill.parameters.get("required", []))
        arguments = "; ".join(_argument(name, schema, name in required) for name, schema in properties.items())
        blocks.append(f"- {skill.name}: {skill.description}\n  Arguments: {arguments or 'none'}")
    return "\n".join(blocks)


def _argument(name: str, schema: dict[str, Any], required: bool) -> str:
    kind = f"one of {'|'.join(map(str, schema['enum']))}" if "enum" in schema else schema.get("type", "any")
    if schema.get("type") == "array":
        inner = schema.get("items", {})
        kind = f"list of {'|'.join(inner['enum']) if 'enum' in inner else inner.get('type', 'any')}"
    note = f" — {schema['description']}" if schema.get("description") else ""
    return f"{name} ({kind}{', required' if required else ''}){note}"


def world_state(session: Session, user_id: str, zone_name: str, now_local: datetime) -> str:
    """A few lines of what exists right now: lists, active reminders, goals."""
    reminders = active_reminder_count(session, user_id)
    goals = session.scalar(select(func.count()).where(Goal.user_id == user_id, Goal.state == "active"))
    list_text = ", ".join(f"{name} ({count} items)" for name, count in list_counts(session, user_id)) or "none"
    return (f"Local time: {now_local.strftime('%A %d %B %Y, %H:%M')} ({zone_name})\n"
            f"Lists: {list_text}\nActive reminders: {reminders}\nActive goals: {goals}")


def trail_text(view: list[dict[str, Any]]) -> str:
    """The prompt trail: actions as JSON lines (results in full, up to a cap), other records as text."""
    if not view:
        return NO_TRAIL
    lines = []
    for index, entry in enumerate(view, 1):
        if entry.get("type", "action") == "action":
            body = {key: entry.get(key) for key in ("skill", "arguments", "ok", "result", "error") if key in entry}
            text = json.dumps(body, ensure_ascii=False, default=str, separators=(",", ":"))
            lines.append(f"{index}. {truncate(text, ENTRY_CHARS)}")
        else:
            lines.append(f"{index}. {entry_line(entry)}")
    return "\n".join(lines)


def fenced_trail(view: list[dict[str, Any]]) -> str:
    """The trail as quoted data: a tool result (a recalled memory, a list item) can carry any text."""
    return fenced("tool-results", trail_text(view)) if view else NO_TRAIL


def step_messages(prompts: Any, *, state: PromptState, skills: str, world: str, context_text: str,
                  user_message: str, zone: tzinfo, zone_name: str, now: datetime) -> list[dict[str, str]]:
    """System prompt (everything as text, history included) plus the person's message."""
    system = prompts.render(
        "act", skills=skills, world=world, current_state=state.current_state or "(nothing yet)",
        context=fenced("memory", context_text) if context_text else "(nothing recalled)", history=state.history,
        trail=fenced_trail(state.view),
        timezone=zone_name, tz=zone, now=now,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user_message}]


def reply_messages(prompts: Any, *, state: PromptState, topic: str, user_message: str, instructions: str,
                   reason: str, zone: tzinfo, zone_name: str, now: datetime,
                   prompt: str = "act-reply") -> list[dict[str, str]]:
    """The prompt that turns the trail into the person's reply."""
    system = prompts.render(
        prompt, instructions=instructions, topic=topic, current_state=state.current_state or "(nothing)",
        history=state.history, trail=fenced_trail(state.view), reason=reason, timezone=zone_name, tz=zone, now=now,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user_message}]
