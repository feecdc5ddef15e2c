"""Typing slips in a skill's own words ("remidn me", "remmber that", "set a gaol"), put right before matching.

Only the skill vocabulary is corrected, and only by slips that rarely turn one English word into another:
two neighbouring letters swapped, one letter dropped from a long word, one key pressed twice in a long
word, one stray key inside a word of eight letters or more ("rememeber"), or the last key of a long word missed
("reming"). A word that merely inflects a keyword ("reminders",
"stored") is left as it is, and no other letter is ever substituted ("goat" stays a goat). "What" texted ("wot",
"wat") is read as "what".
"""

from __future__ import annotations

import re
from functools import lru_cache

KEYWORDS = frozenset(
    "remind reminder remember schedule calendar shopping grocery groceries goal forget delete remove create "
    "tomorrow appointment checklist packing memorize memorise resolution track list note save store".split()
)


def _swaps(word: str) -> set[str]:
    return {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)} - {word}


def _drops(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


# Slips that are words of their own (checked against the MiniLM word-piece vocabulary by
# tests/test_router_classes.py): "memories" is no mistyped "memorise", nor "hopping" a mistyped "shopping".
WORDS_THEMSELVES = frozenset("memories hopping pacing forged forger forges grocers reminded remainder".split())
_SWAPPED = {slip: word for word in KEYWORDS if len(word) >= 4 for slip in _swaps(word) - WORDS_THEMSELVES}
_DROPPED = {slip: word for word in KEYWORDS if len(word) >= 7  # "remmber", "shoping"
            for slip in _drops(word) - WORDS_THEMSELVES}
# The last key of a long word missed for another ("reming me 2moro", "shoppinf list"): a slip at the end, where a
# thumb lifts off.
_LAST_MISSED = {word[:-1] + key: word for word in KEYWORDS if len(word) >= 6 for key in "abcdefghijklmnopqrstuvwxyz"
                if key != word[-1] and word[:-1] + key not in WORDS_THEMSELVES}
# One stray key inside a long word ("rememeber", "calenedar"): at eight letters and more a letter more is a slip,
# rarely another word (an ending added, "reminders", is an inflection, left as it is below).
_INSERTED = {word[:i] + key + word[i:]: word for word in KEYWORDS if len(word) >= 8 for i in range(1, len(word))
             for key in "abcdefghijklmnopqrstuvwxyz" if word[:i] + key + word[i:] not in WORDS_THEMSELVES}
# "What" as texted: "pull up wot i saved about the flour".
TEXTED = {"wot": "what", "wut": "what", "wht": "what", "wat": "what"}
# "For" texted as a digit before whom it is for: "pls put a goal in 4 me: ...", "can u save this 4 us" (not "4 eggs",
# "table 4 me and Jo" is rare; a number with a unit or after a digit, "2 x 4 me", is left as it is).
TEXTED_FOR_RE = re.compile(r"(?<![\d.,:/x*+-] )(?<![\d.,:/x*+-])\b4 (?=(?:me|u|you|us|myself)\b)")


def untexted(lower: str) -> str:
    """``lower`` with a texted "4" for "for" before whom it is for written out ("a goal in 4 me" -> "for me")."""
    return TEXTED_FOR_RE.sub("for ", lower) if "4 " in lower else lower
_LONG = frozenset(word for word in KEYWORDS if len(word) >= 5)
_LONG_STARTS = frozenset(word[:2] for word in _LONG)


@lru_cache(maxsize=4096)  # a pure function of the word, and the same words come back message after message
def correct(word: str) -> str:
    """The keyword ``word`` was meant to be, or ``word`` itself."""
    if word in TEXTED:
        return TEXTED[word]
    if len(word) < 4 or word in KEYWORDS:
        return word
    fix = _SWAPPED.get(word) or _DROPPED.get(word) or _LAST_MISSED.get(word) or _INSERTED.get(word)
    if fix is None and len(word) >= 6 and word[:2] in _LONG_STARTS:  # "shoppping": one key pressed twice
        fix = next((word[:i] + word[i + 1:] for i in range(1, len(word))
                    if word[i] == word[i - 1] and word[:i] + word[i + 1:] in _LONG), None)
    if fix is None or word.startswith(fix) or fix.startswith(word):
        return word  # "reminders", "stored": a keyword inflected, not mistyped
    return fix
