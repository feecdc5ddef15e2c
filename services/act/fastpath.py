"""The ACT fast path: the innate skills' plainest requests, understood without an LLM planning step.

"Add milk and eggs to my shopping list", "What's on my shopping list?", "Remind me tomorrow at 9 to
call the dentist": a small model often fails to turn these into a tool call, a regular expression
does not. The router's signals decide whether a pattern may even be tried (the message must already
look like a list or reminder request), the skill runs through the same dispatcher and critic as any
model-chosen action, and the reply is written from the skill's result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from services.act.when import DueTimeError, parse_due

FAST_PATH = "fast_path"  # the trail marks actions taken this way, and the loop's end reason
_POLITE = r"^(?:(?:hey|hi|ok|okay|so)[, ]+)?(?:please\s+)?(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
_LIST = r"(?:my|the|our)\s+(?P<name>[a-z0-9][a-z0-9' -]{0,40}?)\s+list"
LIST_ADD = re.compile(_POLITE + r"(?:add|put)\s+(?P<items>.+?)\s+(?:to|on|onto|in|into)\s+" + _LIST
                      + r"(?:\s+please)?\W*$")
LIST_VIEW = re.compile(_POLITE + r"(?:what(?:'s| is| are| do i have| have i got)\s+(?:on|in)|show(?: me)?|read(?: me)?"
                       r"|tell me(?: what's on)?|what's in)\s+" + _LIST + r"(?:\s+please)?\W*$")
REMIND = re.compile(_POLITE + r"remind me\s+(?P<rest>.+?)\W*$")
ITEM_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)\s*")
TIME_START = re.compile(r"^(?:at|on|in|tomorrow|today|tonight|next|this|monday|tuesday|wednesday|thursday|friday|"
                        r"saturday|sunday|mon|tue|wed|thu|fri|sat|sun|\d)")
ARTICLES = re.compile(r"^(?:some|a|an|the)\s+")


@dataclass(frozen=True)
class PlainAction:
    skill: str
    arguments: dict[str, Any]


def plain_action(text: str, signals: dict[str, Any], now: datetime, zone: tzinfo) -> PlainAction | None:
    """The one action a plain list or reminder request asks for, or None (the LLM plans it instead)."""
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    if signals.get("skill_list"):
        action = _list_action(lowered)
        if action is not None:
            return action
    if signals.get("skill_remind") and signals.get("has_time"):
        reminder = _reminder(lowered, now, zone)
        if reminder is not None:
            return reminder
    if signals.get("question") and not signals.get("action_request"):
        # A question routed to ACT reads memory: recall with the question itself, the model then answers from it.
        return PlainAction("recall", {"query": text.strip()})
    return None


# Skills whose requests a memory question must not look like: it asks what the person told, not what is stored.
_STORED_THINGS = ("skill_list", "skill_remind", "skill_schedule", "skill_goal", "skill_manage", "skill_forget",
                  "skill_remember")


def answers_from_memory(signals: dict[str, Any]) -> bool:
    """A question about what the person told ("What is my dog's name?") that the router sent to ACT.

    The fast path would run ``recall`` with the question and have the model word a reply from the skill's
    JSON result; the turn's own memory context was assembled from the same question, so a small model
    answers better from it as a plain reply (and a planning failure can never end it).
    """
    return bool(signals.get("question") and signals.get("skill_recall") and not signals.get("action_request")
                and not any(signals.get(name) for name in _STORED_THINGS))


def _list_action(text: str) -> PlainAction | None:
    added = LIST_ADD.match(text)
    if added:
        items = [ARTICLES.sub("", item).strip(" .") for item in ITEM_SPLIT.split(added["items"])]
        items = [item for item in items if item]
        if items and len(items) <= 10:
            return PlainAction("list", {"operation": "add", "name": added["name"].strip(), "items": items})
    viewed = LIST_VIEW.match(text)
    if viewed:
        return PlainAction("list", {"operation": "view", "name": viewed["name"].strip()})
    return None


def _reminder(text: str, now: datetime, zone: tzinfo) -> PlainAction | None:
    match = REMIND.match(text)
    if not match:
        return None
    rest = match["rest"]
    for task, due in _splits(rest):
        if not task or not TIME_START.match(due):
            continue
        try:
            parse_due(due, now, zone)
        except DueTimeError:
            continue
        return PlainAction("schedule", {"operation": "create", "kind": "reminder", "text": task, "due": due})
    return None


def _splits(rest: str) -> list[tuple[str, str]]:
    """(task, due) candidates: "tomorrow at 9 to call X" and "to call X tomorrow at 9"."""
    candidates: list[tuple[str, str]] = []
    head, sep, tail = rest.partition(" to ")
    if sep:
        candidates.append((tail.strip(), head.strip()))
    if rest.startswith("to "):
        words = rest[3:].split()
        # The longest time phrase at the end that parses: "call mum on friday at 6" → "on friday at 6".
        candidates += [(" ".join(words[:cut]), " ".join(words[cut:])) for cut in range(1, len(words))]
    return candidates


def plain_reply(entry: dict[str, Any]) -> str | None:
    """The reply to a fast-path action, written from its trail entry; None when the model should write it."""
    result, error = entry.get("result") or {}, entry.get("error") or {}
    if entry.get("skill") == "list":
        return _list_reply(entry.get("arguments") or {}, result, error, bool(entry.get("ok")))
    if entry.get("skill") == "schedule" and entry.get("ok"):
        created = result.get("created") or {}
        return f"Done: I'll remind you to {created.get('text')} on {created.get('when')}."
    return None


def _list_reply(arguments: dict[str, Any], result: dict[str, Any], error: dict[str, Any], ok: bool) -> str | None:
    name = result.get("list") or arguments.get("name") or "that"
    if not ok:
        if error.get("code") == "not_found":
            known = ", ".join(error.get("lists") or []) or "none yet"
            return f"You don't have a {name} list yet (your lists: {known})."
        return None
    items = [item["text"] for item in result.get("items") or [] if not item.get("checked")]
    if arguments.get("operation") == "view":
        return f"Your {name} list is empty." if not items else f"On your {name} list: {_join(items)}."
    added, already = result.get("added") or [], result.get("already_there") or []
    parts = [f"Added {_join(added)} to your {name} list." if added else ""]
    if already:
        parts.append(f"{_join(already)} {'was' if len(already) == 1 else 'were'} already on it.")
    parts.append(f"It now has: {_join(items)}.")
    return " ".join(part for part in parts if part)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else "nothing"
