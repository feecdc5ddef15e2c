"""The ACT planner of the small-model profile: one constrained JSON call names one action, checked before it runs.

The full planner (services/act/loop.py's ``run``) shows a model every skill's schema, the world, the memory
and the history, and lets it call skills step after step. A 0.5B model given that prompt timed out or wrote
actions no skill takes, and the turn ended in "I had trouble ...". Here the model gets a short prompt with
one example per action (prompts/compact/act.md) and the names of what exists (lists and their items,
reminders, goals), and answers one JSON object under a JSON schema, which llama.cpp's server turns into a
grammar: the object's shape is always right, only its words can be wrong. The words are then checked without
a model: an action that would write a row must have its content, a time must parse, a change must name what
it changes. What fails the check is asked about (CLARIFY); an answer that fits no action, or a model that
failed, gets a plain reply saying what Engram can do. Nothing here ends in an apology.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, tzinfo
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.act.models import GOAL_STATES, Goal, ListItem, NamedList, ScheduledItem
from services.act.when import DueTimeError, parse_due
from services.errors import LLMError
from services.llm.output import ToolCall
from services.text import grounding
from services.zones import zone_of

logger = logging.getLogger(__name__)

SMALL_PLAN = "small_plan"  # the trail marks actions chosen this way, and the loop's end reason
UNUSABLE = "plan_unusable"  # the end reason when the model failed or its answer named no known action
NONE = "none"
TEXT_CHARS, MAX_ITEMS = 120, 10
WORLD_ROWS, WORLD_ITEMS = 6, 8  # lists, reminders and goals shown; items shown per list
CAN_DO = ("I can keep your lists (add, tick off or remove items), set, move or cancel reminders, remember things "
          "you tell me and keep track of your goals.")
NOT_THAT = "That's not something I can do. " + CAN_DO
UNCLEAR = "I'm not sure what you'd like me to do there. " + CAN_DO + " Could you say it another way?"

# Each answer the model may give: the skill it runs, the arguments it fixes, and which of the answer's keys
# become which skill argument. Keys marked optional may be left out of the answer.
ACTIONS: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "list_add": ("list", {"operation": "add"}, {"list": "name", "items": "items"}),
    "list_check": ("list", {"operation": "check"}, {"list": "name", "items": "items"}),
    "list_remove": ("list", {"operation": "remove"}, {"list": "name", "items": "items"}),
    "list_delete": ("list", {"operation": "delete"}, {"list": "name"}),
    "list_show": ("list", {"operation": "view"}, {"list": "name"}),
    "remind": ("schedule", {"operation": "create", "kind": "reminder"},
               {"text": "text", "due": "due", "repeat": "recurrence"}),
    "ask": ("schedule", {"operation": "create", "kind": "prompt"},
            {"text": "text", "due": "due", "repeat": "recurrence"}),
    "reminder_cancel": ("schedule", {"operation": "cancel"}, {"reminder": "match"}),
    "reminder_move": ("schedule", {"operation": "move"}, {"reminder": "match", "due": "due"}),
    "remember": ("memorize", {}, {"fact": "text"}),
    "forget": ("forget", {}, {"memory": "query"}),
    "goal_new": ("goal", {"operation": "create"}, {"goal": "text"}),
    "goal_update": ("goal", {"operation": "update"}, {"goal": "match", "note": "note", "state": "state"}),
    "recall": ("recall", {}, {"query": "query"}),
}
OPTIONAL = {"repeat", "note", "state"}
# A reminder repeats only when the message says so: "every Friday", "each morning", "daily", "on Fridays", "twice a
# week".
REPEAT_SAID = re.compile(r"\b(?:every|each|daily|weekly|fortnightly|monthly|yearly|annually|hourly|nightly|weekdays|"
                         r"weekends|(?:mon|tues|wednes|thurs|fri|satur|sun)days|(?:once|twice|\w+ times) an? "
                         r"(?:day|week|month|year)|a (?:day|week|month))\b")
# What a new row holds must come from the person's message: a 0.5B model asked "don't let me forget to renew my
# passport" answered the prompt's own example, {"do": "forget", "memory": "my old address"}. What a change points
# at (an item to tick off, a reminder to cancel) may also be named in the world the prompt showed.
FROM_MESSAGE = {("list_add", "items"), ("remind", "text"), ("ask", "text"), ("remember", "fact"), ("forget", "memory"),
                ("goal_new", "goal")}
FROM_WORLD = {"list", "items", "reminder", "goal"}
# What each answer key must hold before the action may run, in the words of a question back to the person.
NEEDED = {"list": "which list you mean", "items": "which items", "text": "what to remind you about",
          "due": "when (a day and a time, e.g. \"Friday at 9\")", "reminder": "which reminder",
          "fact": "what I should remember", "memory": "what I should forget", "goal": "which goal",
          "query": "what to look for"}


def answer_schema() -> dict[str, Any]:
    """The JSON schema of the model's answer: one object per action (``do`` names it), or ``{"do": "none"}``."""
    variants = []
    for name, (_, _, keys) in ACTIONS.items():
        properties: dict[str, Any] = {"do": {"const": name}}
        for key in keys:
            # No maxLength / maxItems: llama.cpp spells x{0,120} out as 120 nested optional grammar rules per
            # string; lengths are cut in ``_clean`` instead, and max_tokens caps the answer.
            if key == "items":
                properties[key] = {"type": "array", "items": {"type": "string"}}
            elif key == "state":
                properties[key] = {"enum": list(GOAL_STATES)}
            else:
                properties[key] = {"type": "string"}
        variants.append({"type": "object", "properties": properties,
                         "required": ["do", *(key for key in keys if key not in OPTIONAL)]})
    variants.append({"type": "object", "properties": {"do": {"const": NONE}}, "required": ["do"]})
    return {"anyOf": variants}


def world_text(session: Session, user_id: str, now: datetime, zone: tzinfo) -> str:
    """What the person has now, by name: their lists with items, next reminders, active goals."""
    lists = session.execute(select(NamedList.id, NamedList.name).where(NamedList.user_id == user_id)
                            .order_by(NamedList.updated_at.desc()).limit(WORLD_ROWS)).all()
    lines = []
    for list_id, name in lists:
        items = session.scalars(select(ListItem.text).where(ListItem.list_id == list_id, ListItem.checked.is_(False))
                                .order_by(ListItem.position).limit(WORLD_ITEMS)).all()
        lines.append(f"- list {name}: {', '.join(items) or '(empty)'}")
    reminders = session.execute(select(ScheduledItem.text, ScheduledItem.due_at, ScheduledItem.timezone)
                                .where(ScheduledItem.user_id == user_id, ScheduledItem.status == "active")
                                .order_by(ScheduledItem.due_at).limit(WORLD_ROWS)).all()
    for text, due_at, zone_name in reminders:
        lines.append(f"- reminder: {text} ({due_at.astimezone(zone_of(zone_name)).strftime('%a %d %b %H:%M')})")
    goals = session.scalars(select(Goal.text).where(Goal.user_id == user_id, Goal.state == "active")
                            .order_by(Goal.updated_at.desc()).limit(WORLD_ROWS)).all()
    lines += [f"- goal: {goal}" for goal in goals]
    return "\n".join(lines) or "(no lists, reminders or goals yet)"


def plan_messages(prompts: Any, world: str, user_text: str, now: datetime, zone: tzinfo) -> list[dict[str, str]]:
    system = prompts.render("compact/act", world=world, now=now, tz=zone)
    return [{"role": "system", "content": system}, {"role": "user", "content": user_text}]


def ask_model(llm: Any, messages: list[dict[str, str]]) -> tuple[dict[str, Any] | None, Any]:
    """The model's answer object and its completion; (None, None) when the call failed."""
    try:
        return llm.complete_json("act", messages, schema=answer_schema())
    except LLMError as exc:
        logger.warning("small ACT planner failed: %s", exc)
        return None, None


def to_call(answer: dict[str, Any] | None, user_text: str, now: datetime, zone: tzinfo, world: str = ""
            ) -> tuple[ToolCall | None, str | None]:
    """The action the answer asks for, or what is missing from it (a question back), or neither (no action).

    The schema holds on llama.cpp's server; another endpoint may ignore it, so every key is checked here too.
    """
    name = str((answer or {}).get("do") or "")
    if name not in ACTIONS:
        return None, None
    skill, fixed, keys = ACTIONS[name]
    values = {key: _clean(answer.get(key) if answer else None) for key in keys}
    if name == "recall" and not values["query"]:
        values["query"] = user_text.strip()
    for key in keys:
        if key not in OPTIONAL and not values[key]:
            return None, NEEDED[key]
    if _made_up(name, values, user_text, world):
        return None, None
    if name == "goal_update" and not values["note"] and values["state"] not in GOAL_STATES:
        return None, "what changed (a note on your progress, or done, paused or dropped)"
    if "due" in values:
        try:
            parse_due(str(values["due"]), now, zone)
        except DueTimeError as exc:
            asked = {"missing_time": "the time of day", "ambiguous": str(exc)}
            return None, asked.get(exc.code, NEEDED["due"])
    arguments = dict(fixed)
    for key, argument in keys.items():
        value = values[key]
        if key == "repeat" and (str(value or "").lower() in ("", "none", "once", "never", "no")
                                or not REPEAT_SAID.search(user_text.lower())):
            continue  # never a repeat the person did not ask for (a 1.5B set "weekly" for "on Friday after my shift")
        if key == "state" and value not in GOAL_STATES:
            continue
        if value:
            arguments[argument] = value
    return ToolCall(SMALL_PLAN, skill, arguments), None


def _made_up(name: str, values: dict[str, Any], user_text: str, world: str) -> bool:
    """Whether a value holds none of the words the person said (or, for what a change points at, the world shows)."""
    for key, value in values.items():
        evidence = user_text if (name, key) in FROM_MESSAGE else f"{user_text}\n{world}" if key in FROM_WORLD else None
        said = " ".join(value) if isinstance(value, list) else str(value or "")
        if evidence is not None and said and grounding(said, evidence) == 0.0:
            return True
    return False


def _clean(value: Any) -> Any:
    """A string trimmed, a list of its non-empty strings; anything else (a number, an object) as nothing."""
    if isinstance(value, str):
        return value.strip(" .")[:TEXT_CHARS * 2]
    if isinstance(value, list):
        return [item.strip(" .") for item in value if isinstance(item, str) and item.strip(" .")][:MAX_ITEMS]
    return None


def plan_step(loop: Any) -> None:
    """The small model's one planning step for ``loop`` (services.act.loop.ActLoop): at most one action, then done."""
    request = loop.request
    world = world_text(loop.session, request.user_id, loop.now, loop.zone)
    messages = plan_messages(loop.context.prompts, world, request.text, loop.now, loop.zone)
    answer, completion = ask_model(loop.context.llm, messages)
    if completion is not None:
        loop.completions.append(completion)
    call, missing = to_call(answer, request.text, loop.now, loop.zone, world)
    loop.trail.append({"type": "plan", "answer": answer, "missing": missing})
    if call is not None:
        loop.take([call], SMALL_PLAN)
        return
    loop.missing = missing
    # {"do": "none"} is the model's own "no skill fits"; anything else without an action is an answer unused.
    loop.reason = SMALL_PLAN if missing or (answer or {}).get("do") == NONE else UNUSABLE
