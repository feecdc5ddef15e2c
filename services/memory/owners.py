"""Whose thing a fact's "The party" is, from what the person said before it.

"The party is on Saturday April 18th at 2pm" was told after "… because Ada's party is coming up": alone, the fact
lost Ada, and "when is Ada's party?" was answered with the date of a reminder about Ada's cake. A fact opening with
"The <thing>" takes the owner the person last gave that thing ("Ada's party", "my sister's wedding"), when exactly
one owner was given in the same message or the nearest earlier message that names one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DEFINITE = re.compile(r"^The ([a-z]+)\b")
# Words ending in 's that own nothing ("it's party time", "what's the wedding like").
_NO_OWNER = frozenset("it's that's what's there's here's he's she's let's who's where's how's everyone's "
                      "someone's anyone's one's user's".split())


def with_owner(fact: str, said: Sequence[str]) -> str:
    """``fact`` with its "The <thing>" named for its owner, looked up in ``said`` (newest first)."""
    definite = _DEFINITE.match(fact)
    if definite is None or definite.group(1) == "user":
        return fact
    owned = re.compile(rf"\b(?:(my|our) )?([A-Za-z]+'s) {definite.group(1)}\b", re.IGNORECASE)
    for text in said:
        owners = {(mine.lower() if mine else "", owner) for mine, owner in owned.findall(text)
                  if owner.lower() not in _NO_OWNER}
        if len(owners) > 1:
            return fact  # two owners of a party: which one is not said
        if owners:
            mine, owner = owners.pop()
            owner = f"The user's {owner.lower()}" if mine else owner[:1].upper() + owner[1:]
            return f"{owner} {definite.group(1)}{fact[definite.end():]}"
    return fact
