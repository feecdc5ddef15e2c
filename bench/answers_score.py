"""Scoring for bench/answers.py: expected and forbidden words, echoed messages, stored facts, LoCoMo's token F1.

Words: lower case, accents dropped (the letters without a decomposition spelt out: "ł" as "l", "ı" as "i"),
"3rd" read as "3", "9am" as "9 am", every other character a space; the reply and the phrase alike. A phrase
matches when its words stand in the reply one after the other; a phrase word ending in "*" matches any word it
begins.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import snowballstemmer

ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
DIGIT_LETTER = re.compile(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)")
NOT_WORD = re.compile(r"[^a-z0-9*]+")
# An echo: the reply is the person's message again, whole or nearly (the small-model failure the issue saw).
ECHO_RATIO = 0.8
ECHO_MIN_WORDS = 3
ECHO_SHARE = 0.6
_STEMMER = snowballstemmer.stemmer("porter")
# Letters NFKD leaves whole, which the ASCII step would drop: a reply's "Wrocław" read as "wrocaw" matched neither
# "wroclaw" nor "wrocław", and "patlıcan" as "patlcan".
_UNDECOMPOSED = str.maketrans({"ł": "l", "ı": "i", "ø": "o", "đ": "d", "ð": "d", "ħ": "h", "ŀ": "l", "æ": "ae",
                               "œ": "oe", "ß": "ss", "þ": "th",
                               # Dashes, the minus and the no-break space part words ("06:00–14:00" read "0014").
                               "\u2010": " ", "\u2011": " ", "\u2012": " ", "\u2013": " ", "\u2014": " ",
                               "\u2212": " ", "\u00a0": " "})


def words(text: str) -> list[str]:
    """The text's words, normalised as the module doc says."""
    return _normalised(text).replace("*", " ").split()


def _normalised(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text.lower().translate(_UNDECOMPOSED)).encode("ascii", "ignore").decode()
    return NOT_WORD.sub(" ", DIGIT_LETTER.sub(" ", ORDINAL.sub(r"\1", plain)))


def matches(phrase: str, reply_words: list[str]) -> bool:
    """Whether ``phrase`` (words, "*" for a prefix) stands in ``reply_words`` as consecutive words."""
    wanted = _normalised(phrase).split()  # read as the reply is ("Wrocław", "5k"), its "*" kept
    if not wanted:
        return False

    def same(pattern: str, word: str) -> bool:
        return word.startswith(pattern[:-1]) if pattern.endswith("*") else word == pattern
    size = len(wanted)
    return any(all(same(pattern, word) for pattern, word in zip(wanted, reply_words[start:start + size], strict=True))
               for start in range(len(reply_words) - size + 1))


# A question about something the person never said ("What's my dog called?" from someone who spoke of a cat): right
# when the reply says it does not know and names none of its `forbidden` phrases (what recall would wrongly offer:
# the cat's name). The 1.5B answered "Your dog is called Max." from a note about a cat called Tom.
UNTOLD = "untold"
NOT_TOLD = ("not told", "haven t told", "didn t tell", "did not tell", "never told", "haven t mentioned",
            "didn t mention", "did not mention", "not mentioned", "never mentioned", "haven t said", "didn t say",
            "don t know", "do not know", "not sure", "no idea", "no information", "don t have any", "no record",
            "don t remember", "do not remember", "can t remember", "not aware", "haven t shared", "didn t share")


@dataclass(frozen=True)
class Expectation:
    kind: str
    ask: str
    any: tuple[str, ...] = ()
    all: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()

    @classmethod
    def of(cls, item: dict[str, Any]) -> Expectation:
        kind, wanted = str(item["kind"]), tuple(item.get("any", ()))
        if kind == UNTOLD and not wanted and not item.get("all"):
            wanted = NOT_TOLD
        return cls(kind, str(item["ask"]), wanted, tuple(item.get("all", ())), tuple(item.get("forbidden", ())))


@dataclass
class Verdict:
    right: bool
    missing: list[str] = field(default_factory=list)  # expected phrases not found ("any: a|b" when none was)
    stale: list[str] = field(default_factory=list)  # forbidden phrases found


def score(expectation: Expectation, reply: str) -> Verdict:
    """Right when one ``any`` phrase (if given), every ``all`` phrase and no ``forbidden`` phrase matches."""
    found = words(reply)
    missing = [phrase for phrase in expectation.all if not matches(phrase, found)]
    if expectation.any and not any(matches(phrase, found) for phrase in expectation.any):
        missing.append("any: " + "|".join(expectation.any))
    stale = [phrase for phrase in expectation.forbidden if matches(phrase, found)]
    return Verdict(not missing and not stale, missing, stale)


def is_echo(message: str, reply: str) -> bool:
    """Whether the reply repeats the person's message: nearly the same words, or mostly made of them."""
    said, answered = " ".join(words(message)), " ".join(words(reply))
    if not said or not answered:
        return False
    if SequenceMatcher(None, said, answered).ratio() >= ECHO_RATIO:
        return True
    return len(said.split()) >= ECHO_MIN_WORDS and said in answered and len(said) >= ECHO_SHARE * len(answered)


# A stored fact is true of the person when it is theirs (never the assistant's), says something, stands in their
# own words (nearly every content word of it, stemmed, in one message they sent: the compact profile's chunker
# keeps their sentences; a model that rewords — "The user lives in …" for "we moved to …" — is undercounted), is
# not a request ("Remind me …", "Add …") and was not changed since: it holds a `changed` question's forbidden
# phrase (the old job) and comes from a message that a later one mentioning that phrase changed ("I work at a
# bank" before "I left the bank": the second is the news, the first is stale).
GROUNDED_SHARE = 0.8
FACT_STOP = {"i", "im", "am", "is", "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did",
             "my", "me", "a", "an", "the", "you", "your", "user", "person", "m", "s", "ve", "in", "at", "on", "to",
             "of", "for", "and", "with", "from", "that", "it"}
REQUEST = re.compile(r"^(?:please |can you |could you )?(?:remind|add|put|schedule|set|create|make|show|tell|delete"
                     r"|remove|save|store|write|list|cancel|move)\b")


@dataclass(frozen=True)
class FactVerdict:
    text: str
    true: bool
    why: str = ""  # when not: "the assistant's", "says nothing", "not their words", "a request", "changed since"


def judge_fact(text: str, speaker: str, said: list[str], changed: tuple[str, ...]) -> FactVerdict:
    """Whether one active fact is true of the person (the rules above; ``said``: their messages in order)."""
    if speaker != "user":
        return FactVerdict(text, False, "the assistant's")
    content = _STEMMER.stemWords([word for word in words(text) if word not in FACT_STOP])
    if not content:
        return FactVerdict(text, False, "says nothing")
    overlap = [sum(word in set(_STEMMER.stemWords(words(message))) for word in content) for message in said]
    source = max(range(len(said)), key=overlap.__getitem__) if said else -1
    if source < 0 or overlap[source] < GROUNDED_SHARE * len(content):
        return FactVerdict(text, False, "not their words")
    if REQUEST.match(" ".join(words(text))):
        return FactVerdict(text, False, "a request")
    if any(matches(phrase, words(text)) and any(matches(phrase, words(later)) for later in said[source + 1:])
           for phrase in changed):
        return FactVerdict(text, False, "changed since")
    return FactVerdict(text, True)


# LoCoMo's token F1 (Maharana et al. 2024, its task_eval): commas dropped, articles and "and" dropped,
# punctuation dropped, Porter-stemmed tokens, F1 of the token multisets. Multi-hop answers (category 1)
# are comma-separated parts, each scored against the best prediction part and averaged; an open-domain
# answer (category 3) is scored against its first ";" part. (Lower case comes first here, so a
# capitalised "The" goes too.)
_ARTICLES = re.compile(r"\b(?:a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def answer_tokens(text: str) -> list[str]:
    plain = _ARTICLES.sub(" ", str(text).lower().replace(",", ""))
    return _STEMMER.stemWords(plain.translate(_PUNCTUATION).split())


def token_f1(prediction: str, truth: str) -> float:
    predicted, expected = answer_tokens(prediction), answer_tokens(truth)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def locomo_f1(prediction: str, answer: str, category: int) -> float:
    """Token F1 of a reply against a LoCoMo answer, as its paper's evaluation scores that category."""
    if category == 1:
        parts = [part.strip() for part in prediction.split(",")]
        truths = [truth.strip() for truth in str(answer).split(",")]
        return sum(max(token_f1(part, truth) for part in parts) for truth in truths) / len(truths)
    if category == 3:
        answer = str(answer).split(";")[0].strip()
    return token_f1(prediction, str(answer))
