"""The text alone, normalised once and read for its form: length, punctuation, mashing, questions, phatic talk.

``services/router/signals.py`` builds every other signal on the ``TextView`` made here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from services.router.form_words import (
    AUXILIARIES,
    CLAUSE_LEADS,
    DICTATED_COLON_AFTER,
    DICTATED_MARKS,
    DICTATED_RE,
    EMOJI_RE,
    EMOTICON_RE,
    EXCLAMATIVE_RE,
    FAREWELL_RE,
    FILLER_WORDS,
    GREETING_RE,
    HEDGES,
    INDIRECT_QUESTION_RE,
    INTERROGATIVES,
    NOT_DICTATED_AFTER,
    PHATIC_RE,
    RELATIVE_CLAUSE_RE,
    RHETORICAL_RE,
    SENTENCE_END_RE,
    SHRUG_RE,
    SUBJECT_FIRST_AUX,
    SUBJECTS,
    THANKS_RE,
    WH_CLAUSE_RE,
)
from services.router.mash import keyboard_mash
from services.router.prefilter import Prefiltered
from services.router.time_words import times_replaced
from services.router.typos import correct, untexted
from services.router.words import LEAD_IN_RE, POLITE_WORDS, STOPWORDS, THANKS_LEAD_RE, WORD_RE

_HEAD_CHARS, _TAIL_CHARS = 400, 200


@dataclass(frozen=True, eq=False)
class TextView:
    """The normalised forms of a message that every signal function shares.

    Compared and hashed as an object, not field by field: the signals' caches keyed by a view then hash it in O(1)
    rather than through its strings and word tuples at every call (``text_view`` hands out one view per text while it
    is cached; a view made again for the same text is only a cache miss, answered the same)."""

    raw: str
    lower: str
    words: tuple[str, ...]
    content: tuple[str, ...]
    full_chars: int
    full_words: int

    @cached_property
    def unled(self) -> str:
        """``lower`` without its lead-in ("so", "hey,", "ok so"): where a question or a request opens; read once."""
        return LEAD_IN_RE.sub("", self.lower)

    @cached_property
    def after_thanks(self) -> str:
        """``lower`` without a thanks and a lead-in up front ("gracias, and the other one too"); read once."""
        return LEAD_IN_RE.sub("", THANKS_LEAD_RE.sub("", self.lower))


@lru_cache(maxsize=256)  # the signals read the views of the same message and of its pieces more than once
def text_view(text: str) -> TextView:
    """Normalise once: lower-case, straight apostrophes, a skill's words mistyped put right, words and content words.

    Only the head and tail of a long message are analysed (where greetings and requests sit), so
    routing time stays bounded for an 8,000-character paste; lengths are counted on the full text.
    """
    window = text if len(text) <= _HEAD_CHARS + _TAIL_CHARS else f"{text[:_HEAD_CHARS]} ... {text[-_TAIL_CHARS:]}"
    window = undictated(window)
    lower = untexted(window.replace("\u2019", "'").replace("\u2018", "'").lower().strip())
    words = tuple(WORD_RE.findall(lower))
    fixed = tuple(map(correct, words))
    if fixed != words:  # "remidn me tmrw at 7": every signal then reads "remind me"
        lower = WORD_RE.sub(lambda match: correct(match[0]), lower)
        words = fixed
    content = tuple(w for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))
    full_words = len(words) if window is text else len(text.split())
    return TextView(window, lower, words, content, len(text), full_words)


_DICTATED = Prefiltered(DICTATED_RE)  # run only on a text that says "comma", "colon", "full stop", ...


def undictated(text: str) -> str:
    """``text`` with the punctuation spoken to a dictating phone written as marks ("eggs comma flour" -> "eggs,
    flour"); the ACT fast path reads commands the same way."""
    return _DICTATED.sub(_undictate, text)


def _undictate(match: re.Match) -> str:
    """A spoken punctuation mark as the mark itself ("eggs comma flour" -> "eggs, flour"), or the words as they are."""
    before, mark = match[1], match[2].lower()
    if before.lower() in NOT_DICTATED_AFTER or (mark == "colon" and before.lower() not in DICTATED_COLON_AFTER):
        return match[0]
    return before + DICTATED_MARKS[mark]


def flag(condition: bool) -> float:
    """A condition as a 0/1 signal."""
    return 1.0 if condition else 0.0


def text_features(view: TextView) -> dict[str, float]:
    """Length, sentence count, punctuation-only, emoji-only and keyboard-mash signals."""
    without_emoji = EMOTICON_RE.sub(" ", EMOJI_RE.sub(" ", view.raw))
    has_emoji = without_emoji != view.raw
    has_alnum = any(ch.isalnum() for ch in without_emoji)
    mash = keyboard_mash(view.raw, view.lower, view.words)
    sentences = len([s for s in SENTENCE_END_RE.split(view.raw.strip()) if s.strip()])
    return {
        "char_len": float(view.full_chars),
        "word_count": float(view.full_words),
        "content_words": float(len(view.content)),
        "empty": flag(not view.raw.strip()),
        "short": flag(0 < view.full_words <= 3),
        "long": min(view.full_words, 30) / 30.0,
        "multi_sentence": flag(sentences >= 2),
        "has_emoji": flag(has_emoji),
        "emoji_only": flag(has_emoji and not has_alnum),
        "punct_only": flag(bool(view.raw.strip()) and not has_emoji and not has_alnum),
        "keyboard_mash": mash,
    }


def is_aux_question(words: Sequence[str]) -> bool:
    """Whether the words open with an inverted auxiliary ("did I ...", "have you ...")."""
    # "Do the same as last time" / "have a great weekend" are not questions; "did I ..." / "have you ..." are.
    if len(words) < 2 or words[0] not in AUXILIARIES:
        return False
    return words[0] not in SUBJECT_FIRST_AUX or words[1] in SUBJECTS


def interrogative_signals(view: TextView) -> dict[str, float]:
    """Question mark, wh-question and auxiliary-inverted question signals."""
    body = WORD_RE.findall(view.unled)  # "so what's ..." / "hey, when ..."
    announced = RHETORICAL_RE.match(view.lower)
    rhetorical = announced is not None
    shrugged = shrug_free(view.lower)  # "..., but what can you do.": a shrug asks nothing
    question_mark = "?" in (shrugged if shrugged is not view.lower else view.raw) and not rhetorical
    # "You'll never guess who turned up": the question word is the announcement's, the news follows it.
    opener = [] if announced else body[1:2] if body[:1] and body[0] in HEDGES else body[:1]
    lower = shrugged[announced.end():] if announced else shrugged
    if announced:  # "Can't believe it, ...": the words after the announcement open the sentence
        body = WORD_RE.findall(lower)
    clauses = lower if question_mark or ", wh" not in lower else RELATIVE_CLAUSE_RE.sub(
        lambda match: match[0] if _led_in(lower, match.start()) or " or " in lower[:match.start()] else (
            f"{match[1]} {match[2]}"), lower)
    wh = (bool(INTERROGATIVES.intersection(opener)) and EXCLAMATIVE_RE.match(view.lower) is None) or (  # "What a day."
        WH_CLAUSE_RE.search(clauses) is not None)
    aux = (is_aux_question(view.words) and not rhetorical) or is_aux_question(body) or (
        INDIRECT_QUESTION_RE.search(view.lower) is not None)
    return {
        "question_mark": flag(question_mark),
        "wh_question": flag(wh),
        "aux_question": flag(aux),
        "question": flag(question_mark or wh or aux),
    }


def _led_in(lower: str, start: int) -> bool:
    """Whether the words from where ``lower``'s clause opens up to ``start`` only lead in ("ok, which is better", "right
    so, which ..."): a lead word inside a clause is a word like any other ("came to say hello, which was kind")."""
    opened = max(lower.rfind(mark, 0, start) for mark in ".!?;:")
    words = WORD_RE.findall(lower, opened + 1, start)
    return bool(words) and all(word in CLAUSE_LEADS for word in words)


def shrug_free(lower: str) -> str:
    """``lower`` without a shrug at its end ("..., but what can you do.", "... Progress?"), or ``lower`` itself."""
    shrug = SHRUG_RE.search(lower) if "what" in lower or "?" in lower else None
    return lower[:shrug.start()] if shrug else lower


def phatic_signals(view: TextView) -> dict[str, float]:
    """Greeting, thanks, farewell and brief-reaction signals; ``phatic_only`` when nothing else is said."""
    greeting = GREETING_RE.search(view.lower) is not None
    thanks = THANKS_RE.search(view.lower) is not None
    farewell = FAREWELL_RE.search(view.lower) is not None
    # With no greeting, thanks or farewell found, there is none to take out.
    residue = FAREWELL_RE.sub(" ", THANKS_RE.sub(" ", GREETING_RE.sub(" ", view.lower))) if (
        greeting or thanks or farewell) else view.lower
    reaction = PHATIC_RE.search(residue) is not None
    any_phatic = greeting or thanks or farewell or reaction
    # What is left once the phatic words are out (read only when there are some).
    leftover = [w for w in WORD_RE.findall(PHATIC_RE.sub(" ", residue)) if w not in FILLER_WORDS] if any_phatic else []
    return {
        "greeting": flag(greeting),
        "thanks": flag(thanks),
        "farewell": flag(farewell),
        "reaction": flag(reaction),
        "phatic_only": flag(any_phatic and not leftover),
    }


@lru_cache(maxsize=64)  # several signals ask for the same text's
def content_without_time(view: TextView) -> tuple[str, ...]:
    """Content words without times, politeness ("por favor" names no task and no antecedent) or a pronoun's
    contraction ("I'd like you to remember something": "i'd" is "I", not a thing to remember)."""
    return tuple(w for w in text_view(without_times(view.lower)).content
                 if w not in POLITE_WORDS and w.split("'")[0] not in STOPWORDS)


@lru_cache(maxsize=64)  # the references and the content words both read it
def without_times(lower: str) -> str:
    """``lower`` with every time ("at 6pm", "this week") blanked out."""
    return times_replaced(lower, " ")
