"""Text helpers shared by the ACT critic, memory, cognition and periodic services: words, grounding, truncation,
and how a reply answers a confirmation question."""

from __future__ import annotations

import re
from collections.abc import Iterable

WORD_RE = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")  # a word of lower-case text (``words``)
STOPWORDS = frozenset(
    "a about above after again against all also am an and any are as at be because been before being below between "
    "both but by can could did do does doing down during each few for from further had has have having he her here "
    "hers him his how i if in into is it its itself just like me more most my myself no nor not now of off on once "
    "only or other our ours out over own please same she should so some such than that the their theirs them then "
    "there these they this those through to too under until up very was we were what when where which while who whom "
    "why will with would you your yours yourself tell told say said know remind reminder reminders add put list lists "
    "set get make want need thing things something really maybe yes ok okay dont don't im i'm it's that's let"
    .split()
)
CONFIRM_RE = re.compile(r"^\W*(?:yes|yeah|yep|yup|y|sure|ok(?:ay)?|do it|go ahead|confirm(?:ed)?|please do|"
                        r"absolutely|of course|correct|that'?s right|right)\b")
# Words a yes or a no comes with ("yes please, go ahead and remove it", "no thanks, leave it as it is"); besides them an
# answer says at most a few words ("yes, the 3pm one"), not news of its own.
_ANSWER_WORDS = frozenset("yes yeah yep sure ok okay please do it go ahead and that's that this them those fine right "
                          "thanks thank you cheers great perfect good no not don't leave forget never mind cancel as "
                          "is the one a an of for me all just yup absolutely course correct confirm confirmed lol haha "
                          "remove delete add set change move put take off on away now".split())
_ANSWER_OTHER_WORDS = 3
CANCEL_RE = re.compile(r"^\W*(?:no|nope|nah|n|cancel|don'?t|do not|stop|never ?mind|leave it|forget it)\b")
# Where a sentence ends: after ". ", "! ", "? " — but not after a title before a name ("my doctor, Dr. Petrov,
# says …" is one sentence; split there, the memory kept "my doctor, Dr." and the 1.5B answered "Your doctor is Dr.").
_TITLES = ("dr", "mr", "mrs", "ms", "mx", "prof", "st", "mt", "rev", "fr", "sgt", "capt", "lt", "col", "gen")
SENTENCE_BREAK = re.compile("".join(rf"(?<!\b{title}\.)" for title in _TITLES) + r"(?<=[.!?])\s+", re.IGNORECASE)
# Whose a named list is, no part of its name: "my shopping list", "their party list" ("the" stands where they do), a
# person's "'s" ("Oisín's party list", apostrophes straightened); the router, fast path and list skill share them.
WHOSE = r"(?:my|the|our|his|her|their)"
OWNER_NAME = r"[^\W\d_][\w-]*'s"
# The words for the people nearest the person, by kind, for every module that reads of them (the router, memory's
# readers of facts): each takes the kinds it needs and names the words it adds. NEAREST is what all of them count.
NEAREST = ("wife", "husband", "partner", "mum", "mom", "dad", "son", "daughter", "brother", "sister")
FAMILY = (*NEAREST, "boyfriend", "girlfriend", "mother", "father")
GRANDPARENT = ("grandma", "grandpa", "gran", "nan")
GRANDCHILD = ("grandson", "granddaughter")
RELATIVE = ("aunt", "uncle", "cousin", "niece", "nephew")
FIANCE = ("fiance", "fiancee", "fiancé", "fiancée")


def any_of(*groups: Iterable[str]) -> str:
    """The words of ``groups`` as one regular-expression alternation, longest first (none cut short by another)."""
    return "|".join(sorted({word for group in groups for word in group}, key=lambda word: (-len(word), word)))


def lemma(word: str) -> str:
    """A crude verb/noun normaliser, enough to key "lives in" and "live in" alike."""
    for suffix, keep in (("ies", "y"), ("ing", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


def stem(word: str) -> str:
    """A light plural/possessive stem, so "dentists" matches "dentist" and "mum's" matches "mum"."""
    word = word.removesuffix("'s")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case word tokens (apostrophes straightened)."""
    return WORD_RE.findall(text.lower().replace("\u2019", "'"))


def content_words(text: str) -> list[str]:
    """Stemmed words that carry meaning (no stopwords, no one- or two-letter words), in order."""
    return [stem(word) for word in words(text) if len(word) > 2 and word not in STOPWORDS]


def grounding(subject: str, evidence: str) -> float:
    """Share of ``subject``'s content words that occur in ``evidence`` (1.0 when it has none)."""
    wanted = set(content_words(subject))
    if not wanted:
        return 1.0
    said = set(content_words(evidence))
    return len(wanted & said) / len(wanted)


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one an ellipsis when anything was cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def reply_kind(text: str) -> str | None:
    """"confirm", "cancel" or None for a reply to a confirmation question: a yes or a no and little else ("Ok, now I
    go to sleep, tomorrow I start at 8." opens with "ok" but answers nothing, and had confirmed a removal)."""
    lowered = text.strip().lower()
    kind, answer = next(((kind, found) for kind, pattern in (("cancel", CANCEL_RE), ("confirm", CONFIRM_RE))
                         if (found := pattern.match(lowered))), (None, None))
    if answer is None or "?" in lowered:
        return None
    rest = [word for word in re.findall(r"[a-z0-9']+", lowered[answer.end():]) if word not in _ANSWER_WORDS]
    return kind if len(rest) <= _ANSWER_OTHER_WORDS else None


def as_text(value: object) -> str:
    """A Redis reply as text (the clients here do not decode responses)."""
    return value.decode() if isinstance(value, bytes) else str(value)
