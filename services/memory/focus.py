"""Whose words a question asks for: that person's turns score more (bench/recall/locomo.py, round eight).

Two cases, both read from the question's and the turn's text at query time:

- **A person at large.** "What books has Tim read?", "What activities has Melanie done with her family?" are
  answered by several of that person's turns, each telling one instance in the first person ("I just finished
  ...", "we went camping"), in words the question seldom shares. The speaker signal (speakers.py,
  ``speaker_weight``) already lifts the person's turns by their similarity; among them, the ones where
  they speak of themselves (I / my / we ...) are their account, the ones about the other person ("You're doing
  something amazing!") are not: those score × (1 + ``first_person_boost``). Only when the
  question names no particular thing: "What are the main ingredients of the ice cream recipe shared by
  Joanna?" asks about one event (a definite "the ..."), answered by one turn that matches its words; lifting
  the person's turns there only pushes that turn down, and when the question names the wrong person (LoCoMo's
  adversarial questions) pushes the right one out.
- **Two people, one speaking.** "What did Jon say about Gina's progress?", "What advice does Gina give to
  Jon?" name both speakers, so no one speaker is named (speakers.the_one) and neither gets the speaker signal;
  but the name right after the auxiliary (did Jon, does Gina) is the grammatical subject, the one who says or
  does it: that person's turns score × (1 + ``subject_boost``). Not for a question joining two people or things
  ("and", "both", "together", "each other"): it asks for both.

Cost: a regular expression or two on the question (0.2–13 µs); for a question with a focus, a speaker comparison
per candidate and, for a person at large, a word-set test (~6 µs) per turn of theirs, cached by text; no storage,
no SQL, no embedding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from services.memory import turnshape
from services.memory.config import RecallConfig

_FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())
_DEFINITE = re.compile(r"\bthe\b", re.IGNORECASE)
# "did Jon say", "does Gina give": a capitalised word (a name) after an auxiliary is the question's subject (not
# "did Jon's mom"; not "has opened").
_SUBJECT = re.compile(r"\b(?i:does|did|do|is|was|were|are|has|have|had|would|will|can|could|should)\s+"
                      r"([A-Z][\w\-]*)\b(?!['’]s\b)")
_PRONOUN = "i"
_JOINED = re.compile(r"\b(?:and|both|together|each other)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Focus:
    """The person a question asks for (lower case, as a turn's speaker) and how their turns weigh."""

    person: str
    boost: float
    first_person_only: bool  # only their turns in the first person (a question about them at large)


def of_question(query: str, speaker: str | None, broad: bool, cfg: RecallConfig) -> Focus | None:
    """The question's focus. ``speaker``: the one speaker it names (lower case; None when it names none or
    several); ``broad``: it asks about that speaker at large (``turnshape.asks_broadly``). Recall asks only
    where it read the question's speaker names (an embedder and ``speaker_weight`` > 0)."""
    if speaker is not None:
        if broad and cfg.first_person_boost > 0 and asks_at_large(query):
            return Focus(speaker, cfg.first_person_boost, True)
        return None
    subject = subject_of(query) if cfg.subject_boost > 0 else None
    return Focus(subject, cfg.subject_boost, False) if subject is not None else None


def asks_at_large(query: str) -> bool:
    """Whether the query asks about a person at large (``turnshape.asks_broadly``) and names no particular
    thing ("the ...") that one turn would answer."""
    return turnshape.asks_broadly(query) and _DEFINITE.search(query) is None


def subject_of(query: str) -> str | None:
    """The one name right after an auxiliary ("What did Jon say ...": "jon"), lower case; None when there is
    none or more than one, or when the question joins two people or things ("and", "both", ...)."""
    if _JOINED.search(query):
        return None
    found = {match.group(1).lower() for match in _SUBJECT.finditer(query)} - {_PRONOUN}
    return found.pop() if len(found) == 1 else None


@lru_cache(maxsize=turnshape.CACHED_TURNS)
def speaks_of_self(text: str) -> bool:
    """Whether the turn, its annotations aside, speaks in the first person (I, my, we, our, ...)."""
    said = turnshape.BRACKETED.sub(" ", text or "").lower().translate(turnshape.NON_LETTERS).split()
    return not _FIRST_PERSON.isdisjoint(said)


def factor(speaker: str | None, text: str | None, focus: Focus | None) -> float:
    """The score factor of a candidate turn (its speaker and text): 1 + the focus's boost when the focus's
    person said it (in the first person, where the focus asks for that), else 1."""
    if focus is None or (speaker or "").lower() != focus.person:
        return 1.0
    if not focus.first_person_only:
        return 1.0 + focus.boost
    return 1.0 + focus.boost if speaks_of_self(text or "") else 1.0
