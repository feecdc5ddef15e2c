"""What a turn's own shape says about whether it can answer a question, read from its text at query time.

Two cues, both measured on LoCoMo (bench/recall/locomo.py, round four):

- a turn that mostly asks ("What inspired you?", "How was the event?") shares the question's words
  but rarely holds what happened: its relevance is scaled by 1 − weight × the share of its sentences
  that are questions (its reply still gets the asked words through reply_context_weight);
- a question asking *when*, *how many* or *where* is answered by a turn that holds a time word, a
  number or a place ("last Saturday", "two dogs", "in Paris"): such a turn gets a small relevance bonus.

A third cue is the question's own shape: a question about the person at large, asking for an aggregate of
their life ("What books has Tim read?", "How many times has ...", "What are Joanna's hobbies?") or for an
inference about them ("Would Caroline ...?", "What might John ...?"), is answered by several of that
person's turns that share few of its words: their own account counts more for it (focus.py).

The turn cues are read from the candidate turn's text in Python (~10 µs a turn, ~2 ms over a recall's few hundred
candidates when none is cached, cached by text after that); no storage and no embedding.
"""

from __future__ import annotations

import re
from functools import lru_cache

# A recall reads a few hundred candidate turns, mostly the same ones again for the same person: the
# shape of a turn's text is computed once (~10 µs) and kept.
CACHED_TURNS = 50_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
BRACKETED = re.compile(r"\[[^\]]*\]")  # "[shared an image: ...]": an annotation, not something said
# Word sets, not IGNORECASE alternations: a turn's words are looked up in C (set operations); a regex
# alternation per candidate cost ~40 µs, ~10 ms over a recall's few hundred candidate turns.
NON_LETTERS = str.maketrans({c: " " for c in ".,!?;:\"()[]{}/-–—…'’"})
_TIME_WORDS = frozenset(
    "yesterday today tomorrow tonight ago last next weekend week month year monday tuesday wednesday thursday "
    "friday saturday sunday january february march april may june july august september october november "
    "december".split())
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty hundred few couple several once "
    "twice".split())
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_DIGIT = re.compile(r"\d")
# A capitalised word after a word that introduces a place ("in Paris", "visited the Louvre").
_PLACE_BEFORE = frozenset("in at to from visited visit trip went".split())
_CAPITALISED = re.compile(r"(?<=\s)[A-Z][a-z]+")
_ASKS_TIME = re.compile(r"^\s*when\b|\bwhat (?:year|month|day|date|time)\b|\bhow long ago\b", re.IGNORECASE)
_ASKS_NUMBER = re.compile(r"^\s*how (?:many|much)\b|\bhow long\b", re.IGNORECASE)
_ASKS_PLACE = re.compile(r"^\s*where\b|\bwhat (?:country|city|town|state|place)\b", re.IGNORECASE)
# "What <few words> <plural> has/does/...", "How many ...", "What are ...", "Where has ...": a list gathered
# over the person's life. "Would/Does/Is ...", "... likely / might ...": an inference about the person.
_ASKS_MANY = re.compile(r"^\s*(?:what|which)\s+(?:\w+\s+){0,3}?\w+s\s+(?:has|have|does|do|did|is|are)\b"
                        r"|^\s*how many\b|^\s*what are\b|^\s*where ha(?:s|ve)\b", re.IGNORECASE)
_ASKS_INFERENCE = re.compile(r"^\s*(?:would|might|could|does|do|is|are|what would|what could)\b"
                             r"|\b(?:likely|might)\b", re.IGNORECASE)


@lru_cache(maxsize=CACHED_TURNS)
def question_share(text: str) -> float:
    """The share of the turn's sentences that are questions (0 for a statement, 1 for a pure question)."""
    if "?" not in (text or ""):
        return 0.0
    spoken = BRACKETED.sub(" ", text or "").strip()
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


def asks_broadly(query: str) -> bool:
    """Whether the query asks about a person at large: a list over their life or an inference about them."""
    return bool(_ASKS_MANY.search(query) or _ASKS_INFERENCE.search(query))


def carries(cue: str | None, text: str) -> bool:
    """Whether the turn holds the kind of answer ``cue`` names."""
    return cue is not None and bool(text) and _carries(cue, text)


@lru_cache(maxsize=CACHED_TURNS)
def _carries(cue: str, text: str) -> bool:
    if cue == "place":
        return any(_introduces_place(text[max(0, match.start() - 16) : match.start()])
                   for match in _CAPITALISED.finditer(text))
    words = text.lower().translate(NON_LETTERS).split()
    if cue == "time":
        return not _TIME_WORDS.isdisjoint(words) or _YEAR.search(text) is not None
    return not _NUMBER_WORDS.isdisjoint(words) or _DIGIT.search(text) is not None


def _introduces_place(before: str) -> bool:
    """Whether the text before a capitalised word ends in "in", "visited the", ... ."""
    words = before.split()[-2:]
    if words and words[-1] == "the":
        words = words[:-1]
    return bool(words) and words[-1].lower() in _PLACE_BEFORE
