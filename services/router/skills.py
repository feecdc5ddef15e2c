"""Which innate ACT skill a message's skill signals point at: shown by ``engram route``, measured by bench.routing.

The router only chooses the mode; the ACT loop (or its fast path) chooses the action. The hint
names the skill the signals already imply, so a routing explanation says what would be done and
the evaluation sets can check it against their labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from services.router.signals import text_view

_STORED_THING_RE = re.compile(r"\b(?:remind\w*|alarms?|timers?|appointments?|meetings?|events?|notifications?)\b")
_LIST_RE = re.compile(r"\b(?:lists?|to-?dos?|un(?:tick|check)|(?:tick|check|cross) off)\b")  # "untick bananas"
_GOAL_RE = re.compile(r"\b(?:goals?|resolutions?)\b")
# Booked things are read from the schedule: "when is my next dentist appointment?" (not what was said about it).
_BOOKED_RE = re.compile(
    r"^(?:when|what time|where|what day)\b[^?]{0,40}\b(?:appointments?|meetings?|events?|calendar)\b"
)


def skill_hint(text: str, signals: Mapping[str, float]) -> str | None:
    """The ACT skill (recall, memorize, introspect, schedule, list, goal, forget) the signals imply, or None.

    Reading and forgetting come first ("remind me what I said" reads, "erase what I told you"
    forgets), then a reminder ("remind me to add eggs to my list at 6" is a reminder), then the
    stores by name, then a fact to keep; an edit (``skill_manage``) goes to what it names.
    """
    def on(name: str) -> bool:
        return bool(signals.get(f"skill_{name}"))

    if on("forget"):
        return "forget"
    if signals.get("shows_stored") and not on("list"):
        return "recall"  # a command to show stored items ("show my reminders", "list my goals")
    if on("introspect"):
        return "introspect"
    # "What are my goals right now?" reads the goals themselves; "remind me what I said about my goals" recalls.
    reads_a_store = (on("list") or on("goal") or on("manage")) and not on("remind")
    if on("recall") and not on("remind") and _BOOKED_RE.search(text_view(text).lower):
        return "schedule"
    if (on("recall") and not reads_a_store) or signals.get("remind_explain"):
        return "recall"
    if on("remind"):
        return "schedule"
    for name, skill in (("list", "list"), ("goal", "goal"), ("schedule", "schedule"), ("remember", "memorize")):
        if on(name):
            return skill
    if on("manage"):
        lower = text_view(text).lower
        for regex, skill in ((_STORED_THING_RE, "schedule"), (_LIST_RE, "list"), (_GOAL_RE, "goal")):
            if regex.search(lower):
                return skill
    return None


def skill_explanation(text: str, signals: Mapping[str, float]) -> str | None:
    """One line for ``engram route``: the skill the message asks for and whether it says enough to run it."""
    skill = skill_hint(text, signals)
    if skill is None:
        return None
    fired = ", ".join(name for name, value in signals.items() if value and name.startswith("skill_")
                      and name != "skill_any")
    asked_about = [name for name in ("general_question", "capability_question", "writing_task", "past_question")
                   if signals.get(name)]
    if asked_about == ["past_question"]:  # "what did I tell you about my landlord?"
        state = "asks about the past (past_question): answered in words, nothing to run"
    elif asked_about:  # "Are phone reminders better than sticky notes?": the skill's words, no request to use it
        state = f"only talks about it ({asked_about[0]}): nothing to run"
    elif signals.get("slots_complete"):
        state = "says what to do: it can run"
    elif signals.get("slot_missing"):
        state = "names nothing to act on" if not signals.get("points_back") else \
            "points at something said earlier that is not in this conversation"
        state += ": ask first"
    else:
        state = "reads what is stored"
    return f"{skill} ({fired}); {state}"
