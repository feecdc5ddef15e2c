"""A person's own account of their life: on a question about them at large, their turns in the first person.

"What books has Tim read?", "What activities has Melanie done with her family?" are answered by several of
that person's turns, each telling one instance of it in the first person ("I just finished ...", "we went
camping"), in words the question seldom shares. The speaker signal (speakers.py, ``speaker_weight_broad``)
already lifts the person's turns by their similarity to the question; among those turns, the ones where
they speak of themselves (I / my / we ...) are the account, while the ones about the other person ("You're
doing something amazing!") are not. On LoCoMo's multi-hop questions, the evidence ranked just outside the
first 20 turns is first person 91% of the time, against 70% for the turns it ranked below (bench/locomo.py,
rounds seven and eight). Such a turn's score is × (1 + ``first_person_boost``).

Only for a question that names no particular thing: "What are the main ingredients of the ice cream recipe
shared by Joanna?" asks about one event (a definite "the ..."), answered by one turn that matches its words,
not gathered over a life; lifting the person's turns there only pushes that turn down, and when the
question names the wrong person (LoCoMo's adversarial questions) it pushes the right one out.

Read from the turn's text at query time (a word-set test, ~3 µs a turn, cached by text); no storage.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from services.memory import turnshape

CACHED_TURNS = 50_000
_FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())
_BRACKETED = re.compile(r"\[[^\]]*\]")  # "[shared an image: ...]": an annotation, not something said
_NON_LETTERS = str.maketrans({c: " " for c in ".,!?;:\"()[]{}/-–—…'’"})
_DEFINITE = re.compile(r"\bthe\b", re.IGNORECASE)


def asks_at_large(query: str) -> bool:
    """Whether the query asks about a person at large (``turnshape.asks_broadly``) and names no particular
    thing ("the ...") that one turn would answer."""
    return turnshape.asks_broadly(query) and _DEFINITE.search(query) is None


@lru_cache(maxsize=CACHED_TURNS)
def speaks_of_self(text: str) -> bool:
    """Whether the turn, its annotations aside, speaks in the first person (I, my, we, our, ...)."""
    said = _BRACKETED.sub(" ", text or "").lower().translate(_NON_LETTERS).split()
    return not _FIRST_PERSON.isdisjoint(said)


def factor(row: dict[str, Any], person: str | None, boost: float) -> float:
    """The score factor of a candidate turn: 1 + ``boost`` when ``person`` (the lower-case name of the speaker a
    question about them at large names; None: no such question) says it in the first person, else 1."""
    if person is None or boost <= 0 or (row.get("speaker") or "").lower() != person:
        return 1.0
    return 1.0 + boost if speaks_of_self(row.get("text") or "") else 1.0
