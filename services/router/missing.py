"""What a clarifying turn lacks, and the question that asks for it.

A CLARIFY turn (the router's, or an ACT loop that ended short of a detail) must ask the person for what is missing:
told to ask, the 1.5B answered 13 of 30 underspecified commands with a promise ("Sure, I'll save it for you.", "I'll
add him to the list") and nothing was done (/tmp/lead15/clarify_probe.py, 2026-11-30). The reply guard
(services/llm/guard.py, ``must_ask``) puts the question below in place of a reply that asks nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What a routed CLARIFY turn lacks: as the mode's instruction names it, and as the question asked when the reply
# asks nothing.
MISSING = {
    "reference": ("what or whom the message refers to (there is nothing earlier it could mean)",
                  "Which one do you mean? I don't have anything earlier that it could refer to."),
    "time": ("when it should happen (a date and time)", "When should it be? Tell me the day and the time."),
    "task": ("what exactly should be done", "What exactly would you like me to do?"),
    "detail": ("the detail needed to act without guessing", "Could you tell me a little more, so I don't guess?"),
}


def missing_kind(signals: Mapping[str, Any]) -> str:
    """Which of ``MISSING`` a request lacks, from the signals that made it incomplete."""
    if signals.get("unresolved_reference"):
        return "reference"
    if (signals.get("skill_remind") or signals.get("skill_schedule")) and not signals.get("has_time"):
        return "time"
    if not signals.get("has_task"):
        return "task"
    return "detail"


def describe_missing(signals: Mapping[str, Any]) -> str:
    """What a CLARIFY question should ask for, from the signals that made the request incomplete."""
    return MISSING[missing_kind(signals)][0]


def clarifying_question(signals: Mapping[str, Any]) -> str:
    """The question a routed CLARIFY reply asks when the model's own asks nothing."""
    return MISSING[missing_kind(signals)][1]


def question_for(missing: str) -> str:
    """The question back when an action lacks a detail (``missing``, as the ACT loop names it: "the time of day")."""
    return f"I can do that, but I need to know {missing}. Could you tell me?"
