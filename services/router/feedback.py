"""Explicit feedback on the previous reply ("that's not what I asked", "perfect, thanks")."""

from __future__ import annotations

import re

from services.router.signals import text_view

_NEGATIVE_FEEDBACK_RE = re.compile(
    r"\b(?:that'?s|that is|this is|it'?s) not what i (?:asked|meant|said|wanted|need(?:ed)?)\b|^no,? i meant\b|"
    r"^(?:no,? )?(?:that'?s |that is |you'?re |this is )?(?:wrong|incorrect|not right|not true)\b|"
    r"\byou (?:misunderstood|got it wrong|didn'?t (?:answer|understand|listen))\b|\bnot what i (?:asked|meant)\b|"
    r"\b(?:that'?s|that is|this is) (?:not (?:helpful|useful|it)|useless|unhelpful)\b|"
    r"\bthat (?:doesn'?t|does not|didn'?t) help\b|^(?:nope|try again)\b|\bwrong answer\b"
)
_POSITIVE_FEEDBACK_RE = re.compile(
    r"^(?:perfect|exactly|spot on|nailed it|great answer|excellent)\b|"
    r"\b(?:that'?s|that is|this is) (?:so |really |very )?(?:helpful|perfect|exactly (?:it|right|what i needed)|"
    r"what i (?:needed|wanted)|right|great|useful)\b|\bthat (?:really )?(?:helps|helped|worked)\b|"
    r"\b(?:thanks|thank you),? (?:that|this) (?:helps|helped|is helpful|was helpful)\b|\bgreat answer\b"
)


def detect_feedback(text: str) -> str | None:
    """Explicit feedback on the previous reply: "negative", "positive" or None."""
    lower = text_view(text).lower
    if _NEGATIVE_FEEDBACK_RE.search(lower):
        return "negative"
    if _POSITIVE_FEEDBACK_RE.search(lower):
        return "positive"
    return None
