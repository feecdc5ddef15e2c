"""The items a list request names, read from the words after its verb: "sunscreen, fins and the cooler", "a new veil on
it, the old one has a hole", "a big thermos flask instead because we will be serving tea outside" (the fast path's
and ``list_edits``' one reading of them)."""

from __future__ import annotations

import re

from services.text import SENTENCE_BREAK

QUOTES = "'\"\u2018\u2019\u201c\u201d"
# "sunscreen n bug spray": chat's "n" is "and".
# "tape plus balloons", "tape and also balloons", "tape as well as balloons": one item each.
ITEM_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+|n\s+|plus\s+)?(?:also\s+)?|\s+(?:and(?: also)?|n|plus|as well as)\s+"
                        r"|\s*&\s*)\s*")
ARTICLES = re.compile(r"^(?:some|a|an|the)\s+")
# A last "item" that is a clause of its own, not a thing: "…, a tape measure, need to sort my own kit", "…, cos
# mine broke", "…, for the trip", "…, for her school", "…, thanks"; or a thing and what it does: "…, that boy burns
# like a lobster" (not "…, that stuff for the roof", "…, those kids' toys for the beach").
_CLAUSE_ITEM = re.compile(r"^(?:i|i'm|im|i've|ive|we|we're|need|needs|gotta|got to|have to|cos|coz|because|since|so|"
                          r"as|just|going|heading|off to|for (?:the|my|our|a|her|his|their|your|him|them)|thanks|"
                          r"thank you|thx|cheers|ta|please|pls|plz|"
                          r"that's|thats|it's|its|lol|haha|he|she|they|he's|she's|they're|theyre)\b|"
                          # why, of the one it replaces: "add a queen excluder, one broke", "…, mine snapped"
                          r"^(?:one|mine|ours|the old one)\s+(?:[\w'-]+ed|broke|went|ran|got|is|was|has|had|tore|"
                          r"split|died)\b|"
                          r"^(?:that|this|those|these)\s+[\w'-]+\s+[\w'-]+(?:s|ed)\s+"
                          r"(?!(?:for|of|with|from|in|on|to|and|or|at)\b)")
# What may follow an item and is no part of it: where it goes ("a new veil on it"), that it replaces another ("a
# tablet for Bea instead", Tagalog's "ensaymada na lang") and why ("… instead because we will be serving tea outside").
_WHY = re.compile(r"\s+(?:because|cos|coz|cuz|'cause|since)\s.*$")
_TAIL = re.compile(r"\s+(?:(?:on|onto|to|in|into)\s+(?:it|there|that|the list|this list|that list)|instead|na lang|"
                   r"nalang|too|as well)$")
# An item that points at a thing said before: "put them on mine", "add it to my shopping list" (which?).
POINTER_ITEM = re.compile(r"^(?:them|it|that|those|these|this|everything|all of (?:it|them)|them all|(?:that|this) one)"
                          r"(?:$|\s+(?:on|onto|to|in|into|too|as well|also|please|pls)\b)")  # (not "this week's …")
SAYS_SOMETHING = re.compile(r"\b(?:is|are|was|were|be|i|i'm|you|we|he|she|they|it|it's|says|said|will|would|can|"
                            r"need|needs|want|wants|have|has)\b")


def as_typed(items: list[str], text: str) -> list[str]:
    """The items with the person's own capitals, found in the message as typed ("Wolf Hall", not "wolf hall"); one put
    together from two places of it ("pay Vikram's fees" + "after my shift") word by word."""
    typed = []
    for item in items:
        words = r"\s+".join(re.escape(word) for word in item.split())
        found = re.search(rf"(?<!\w){words}(?!\w)", text, re.IGNORECASE) if words else None
        typed.append(found.group(0) if found else re.sub(r"\S+", lambda word: _typed_word(word[0], text), item))
    return typed


def _typed_word(word: str, text: str) -> str:
    found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
    return found.group(0) if found else word


def said_items(raw: str) -> list[str]:
    """The things named, up to the first sentence's end ("sunscreen, fins and the cooler. we goin richardsons this
    wknd") and before the first clause after them ("…, a unicorn cake topper, because ada's party is coming up and
    unicorns are all she talks about")."""
    first_sentence = SENTENCE_BREAK.split(raw, maxsplit=1)[0]
    # The sentence's own end is no part of its last item: "… and some twine? I will go on Saturday" kept "twine?".
    items = [_bare(ARTICLES.sub("", item).strip(" .!?" + QUOTES)) for item in ITEM_SPLIT.split(first_sentence)]
    items = [item for item in items if item]
    clause = next((index for index, item in enumerate(items) if index and _CLAUSE_ITEM.match(item)), len(items))
    return items[:clause]


def _bare(item: str) -> str:
    """The item without what follows it and is no part of it (``_WHY``, ``_TAIL``)."""
    item = _WHY.sub("", item)
    previous = None
    while previous != item:
        previous, item = item, _TAIL.sub("", item)
    return item
