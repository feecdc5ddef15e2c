"""The critic: a cheap, deterministic check around every action.

Before an action it silently corrects the arguments of safe skills (recall, memorize,
introspect, associate) and scores consequential ones (schedule, list changes, goals, forget):
is the subject something the person actually said, did they ask to remove something, does
the time match the one they gave? Below ``confirm_below`` the action is not run; it waits in
the thread state for the person's "yes" on the next message. After an action it may ask for
one silent retry (an empty recall with a wordy query is retried with its key words).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from services.act.config import CriticConfig
from services.act.skills.base import Arguments, Skill
from services.act.when import DueTimeError, parse_due
from services.router.time_words import says_time
from services.text import content_words, grounding, reply_kind

PENDING_FIELD = "pending_action"
DESTRUCTIVE_RE = re.compile(r"\b(?:delete|remove|cancel|drop|clear|erase|forget|abandon|give up|stop|scrap|quit|"
                            # "take the glue gun off the list" (it asked to confirm a removal asked for)
                            r"(?:take|cross|strike|knock|scratch) (?:[\w'-]+ ){0,4}off|"
                            # "take out the prata, the shop close down liao" (it asked; the prata stayed on the list)
                            r"(?:take|tek) (?:[\w'-]+ ){0,4}out|"
                            # "nvm the usb stick, found my old one under the bed"
                            r"nvm|never ?mind|"
                            r"get rid|bin|no longer|don'?t need|no need|ditch|nix|swap|replace|"
                            # "the tent can come off the camping list"
                            r"(?:come|go) off|"
                            # "Nikos doesn't want headphones anymore, he wants a gaming mouse, put that instead"
                            r"(?:doesn'?t|does not|don'?t|do not) want (?:[\w'-]+ ){1,4}any ?more|"
                            r"put (?:that|it|this|one) (?:on )?instead|"
                            # "Please change the book to headphones on my Christmas presents list"
                            r"(?:change|switch|exchange) (?:[\w'-]+ ){1,4}(?:to|for|into|with))\b")
_CLOCK_RE = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b")
SAFE_FIXES = {"recall", "memorize", "introspect", "associate"}


@dataclass
class Assessment:
    run: bool
    confidence: float
    reasons: list[str] = field(default_factory=list)


def live_pending(extra: dict[str, Any], ttl_s: float) -> dict[str, Any] | None:
    """The thread's pending action, unless it is missing or stale."""
    pending = extra.get(PENDING_FIELD)
    if not isinstance(pending, dict):
        return None
    if time.time() - float(pending.get("created_at", 0)) > ttl_s:
        return None
    return pending


def awaits_confirmation(thread_extra: dict[str, Any], text: str, ttl_s: float = 1800.0) -> bool:
    """True when this message answers a pending confirmation (so the ACT loop must take it)."""
    return live_pending(thread_extra, ttl_s) is not None and reply_kind(text) is not None


def pending_confirmation(tool_trail: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """``{"skill", "description"}`` of the action a turn held back for the person's yes/no, else None."""
    for step in reversed(tool_trail or []):
        if step.get("type") == "pending":
            return {"skill": step.get("skill"), "description": step.get("description")}
    return None


class Critic:
    def __init__(self, config: CriticConfig) -> None:
        self.config = config

    def correct(self, skill: Skill | None, arguments: Arguments, user_text: str) -> tuple[Arguments, list[str]]:
        """Silent fixes for safe skills: drop unknown keys, clamp numbers, fill an empty recall query."""
        if skill is None or skill.name not in SAFE_FIXES:
            return arguments, []
        notes: list[str] = []
        known = skill.parameters.get("properties", {})
        fixed = {key: value for key, value in arguments.items() if key in known}
        if len(fixed) != len(arguments):
            notes.append(f"dropped unknown arguments {sorted(set(arguments) - set(fixed))}")
        for key, schema in known.items():
            value = fixed.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                clamped = min(max(value, schema.get("minimum", value)), schema.get("maximum", value))
                if clamped != value:
                    fixed[key] = clamped
                    notes.append(f"{key} {value} → {clamped}")
            elif "enum" in schema and value is not None and value not in schema["enum"]:
                fixed.pop(key)
                notes.append(f"dropped invalid {key} {value!r}")
        if skill.name == "recall" and not str(fixed.get("query") or "").strip():
            fixed["query"] = user_text
            notes.append("empty query → the person's message")
        return fixed, notes

    def assess(self, skill: Skill, arguments: Arguments, evidence: str, now: Any, zone: Any,
               request: str | None = None) -> Assessment:
        """Run now, or ask first? Only consequential actions can be held back. ``request``: the message that asked,
        when ``evidence`` holds earlier turns too; a due time is checked against its times when it says one."""
        if skill.always_confirm:
            return Assessment(False, 0.0, [f"{skill.name} always asks first"])
        if not skill.consequential(arguments):
            return Assessment(True, 1.0)
        reasons: list[str] = []
        grounded = grounding(skill.subject(arguments), evidence)
        confidence = 0.5 + 0.5 * grounded
        if grounded < 1.0:
            reasons.append(f"only {grounded:.0%} of {skill.subject(arguments)!r} was said by the person")
        invented = _items_never_said(skill, arguments, evidence)
        if invented:
            # Half a list's words said is not half its items: "taco night" said, "tacos, beans, steak" put on it.
            confidence *= 0.6
            reasons.append(f"the person never said {', '.join(map(repr, invented))}")
        if skill.destructive(arguments) and not DESTRUCTIVE_RE.search(evidence.lower()):
            confidence *= 0.6
            reasons.append("removes something the person did not ask to remove")
        said_when = request if request is not None and says_time(request.lower()) else evidence
        if skill.name == "schedule" and arguments.get("due") and not _time_matches(arguments["due"], said_when,
                                                                                    now, zone):
            confidence *= 0.6
            reasons.append(f"the time {arguments['due']!r} differs from the one the person gave")
        confidence = round(confidence, 3)
        return Assessment(confidence >= self.config.confirm_below, confidence, reasons)

    def retry_arguments(self, skill_name: str, arguments: Arguments, ok: bool, result: dict[str, Any] | None
                        ) -> Arguments | None:
        """Arguments for one silent retry after a poor result of a safe skill, else None."""
        if skill_name == "recall" and ok and result is not None and not result.get("items"):
            keywords = " ".join(dict.fromkeys(content_words(arguments.get("query", ""))))
            if keywords and keywords != arguments.get("query", "").strip().lower():
                return {**arguments, "query": keywords}
        return None


def _items_never_said(skill: Skill, arguments: Arguments, evidence: str) -> list[str]:
    """The items a list change would add of which the person said not one word."""
    if skill.name != "list" or arguments.get("operation") not in ("add", "create"):
        return []
    return [item for item in arguments.get("items") or [] if isinstance(item, str) and grounding(item, evidence) == 0]


def _time_matches(due: str, evidence: str, now: Any, zone: Any) -> bool:
    """False only when the person named clock times and the due time is none of them."""
    said = _clock_times(evidence)
    if not said:
        return True
    try:
        local = parse_due(due, now, zone).local
    except DueTimeError:
        return True  # the skill itself reports an unusable time
    return (local.hour, local.minute) in said


def _clock_times(text: str) -> set[tuple[int, int]]:
    """Clock times in ``text``: "at 9" (9:00 or 21:00), "9:30", "7pm"; bare numbers without "at" are ignored."""
    times: set[tuple[int, int]] = set()
    lowered = text.lower()
    for match in _CLOCK_RE.finditer(lowered):
        hour, minute, meridiem = int(match[1]), int(match[2] or 0), match[3]
        explicit = meridiem or match[2] or lowered[max(0, match.start() - 3):match.start()] == "at "
        if not explicit or hour > 23 or minute > 59:
            continue
        if meridiem:
            times.add((hour % 12 + (12 if meridiem == "pm" else 0), minute))
        else:
            times.update({(hour, minute), ((hour + 12) % 24, minute)})
    return times
