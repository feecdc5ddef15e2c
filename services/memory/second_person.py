"""A fact about the person as said to them: "The user lives in Lisbon" → "You live in Lisbon".

The small model's notes (services/memory/notes.compact_notes) speak to the person as "you": a small
model answering from "The user has a red car" wrote "The user has a red car" back to the person.
"""

from __future__ import annotations

import re

_THE_USER = re.compile(r"^(?:the user|the person)(?:'s\b|\s+([a-z']+))", re.IGNORECASE)
_YOU_VERBS = {"is": "are", "has": "have", "does": "do", "was": "were", "doesn't": "don't", "isn't": "aren't",
              "hasn't": "haven't", "wasn't": "weren't"}


def to_you(fact: str) -> str:
    """A stored fact as said to the person: "The user lives in Lisbon" → "You live in Lisbon".

    A small model answering from "The user has a red car" wrote "The user has a red car" back to the
    person; from "You have a red car" it writes "You have a red car". Later mentions too: "…, the user is
    a bridesmaid" → "…, you are a bridesmaid".
    """
    match = _THE_USER.match(fact)
    if match is not None:
        if match.group(1) is None:
            fact = "Your" + fact[match.end():]
        else:
            fact = "You " + _base_form(match.group(1).lower()) + fact[match.end():]
    return _LATER_USER.sub(lambda later: "your" if later.group(1) else "you " + _base_form(later.group(2).lower())
                           if later.group(2) else "you", fact)


_LATER_USER = re.compile(r"\bthe user(?:('s)\b|\s+(is|has|was|does|doesn't|isn't|hasn't|wasn't)\b)?")


def _base_form(verb: str) -> str:
    if verb in _YOU_VERBS:
        return _YOU_VERBS[verb]
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "oes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb


# The person's own words in a note that speaks to them: "collect my boubou from the tailor, I need it" was read by the
# 1.5B as its own errand ("I had to remind you about the baptism") in 2 of 4 replies, 1 of 4 said to "you".
_OWN_WORDS = {"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "i'm": "you're",
              "im": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd", "am": "are", "was": "were"}
_OWN_WORD = re.compile(r"(?<![\w'-])(?:i'm|i've|i'll|i'd|im|i|me|my|mine|myself)(?![\w'-])(?:\s+(?:am|was)\b)?",
                       re.IGNORECASE)


def own_words_to_you(text: str) -> str:
    """The person's words about themselves said back to them: "call my sister, I promised" → "call your sister, you
    promised" (a reminder's or a list's text, kept as they typed it)."""
    def swap(match: re.Match[str]) -> str:
        words = match.group(0).lower().split()
        return " ".join(_OWN_WORDS.get(word, word) for word in words)
    return _OWN_WORD.sub(swap, text)

