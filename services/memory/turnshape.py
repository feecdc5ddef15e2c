"""What a turn's own shape says about whether it can answer a question, read from its text at query time.

Two query-independent cues, both measured on LoCoMo (bench/locomo.py, round four):

- a turn that mostly asks ("What inspired you?", "How was the event?") shares the question's words
  but rarely holds what happened: its relevance is scaled by 1 − weight × the share of its sentences
  that are questions (its reply still gets the asked words through reply_context_weight);
- a question asking *when*, *how many* or *where* is answered by a turn that holds a time word, a
  number or a place ("last Saturday", "two dogs", "in Paris"): such a turn gets a small relevance bonus.

Both cost a few regular-expression matches per candidate turn; no storage and no embedding.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BRACKETED = re.compile(r"\[[^\]]*\]")  # "[shared an image: ...]": an annotation, not something said
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
CUES: dict[str, re.Pattern[str]] = {
    "time": re.compile(rf"\b(?:yesterday|today|tomorrow|tonight|ago|last|next|weekend|week|month|year|"
                       rf"{_DAYS}|{_MONTHS}|(?:19|20)\d\d)\b", re.IGNORECASE),
    "number": re.compile(r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
                         r"hundred|few|couple|several|once|twice)\b", re.IGNORECASE),
    # A capitalised word after a word that introduces a place ("in Paris", "visited the Louvre").
    "place": re.compile(r"\b(?:in|at|to|from|visited|visit|trip|went)\s+(?:the\s+)?[A-Z][a-z]+"),
}
_ASKS_TIME = re.compile(r"^\s*when\b|\bwhat (?:year|month|day|date|time)\b|\bhow long ago\b", re.IGNORECASE)
_ASKS_NUMBER = re.compile(r"^\s*how (?:many|much)\b|\bhow long\b", re.IGNORECASE)
_ASKS_PLACE = re.compile(r"^\s*where\b|\bwhat (?:country|city|town|state|place)\b", re.IGNORECASE)


def question_share(text: str) -> float:
    """The share of the turn's sentences that are questions (0 for a statement, 1 for a pure question)."""
    spoken = _BRACKETED.sub(" ", text or "").strip()
    sentences = [s for s in _SENTENCE_END.split(spoken) if s.strip()]
    if not sentences:
        return 0.0
    return sum(s.rstrip().endswith("?") for s in sentences) / len(sentences)


def answer_cue(query: str) -> str | None:
    """The kind of answer the query asks for: "time", "number", "place" or None."""
    if _ASKS_TIME.search(query):
        return "time"
    if _ASKS_NUMBER.search(query):
        return "number"
    if _ASKS_PLACE.search(query):
        return "place"
    return None


def carries(cue: str | None, text: str) -> bool:
    """Whether the turn holds the kind of answer ``cue`` names."""
    return cue is not None and bool(CUES[cue].search(text or ""))
