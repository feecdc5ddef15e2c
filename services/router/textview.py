"""The text alone, normalised once and read for its form: length, punctuation, mashing, questions, phatic talk.

``services/router/signals.py`` builds every other signal on the ``TextView`` made here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from services.router.form_words import (
    AUXILIARIES,
    CLAUSE_LEADS,
    COMMON_BIGRAMS,
    DICTATED_COLON_AFTER,
    DICTATED_MARKS,
    DICTATED_RE,
    ELONGATION_RE,
    EMOJI_RE,
    EMOTICON_RE,
    EXCLAMATIVE_RE,
    FAREWELL_RE,
    FILLER_WORDS,
    GREETING_RE,
    HANGUL_JAMO_RE,
    HEDGES,
    HELD_DIGITS_MIN,
    HELD_DIGITS_RE,
    INDIRECT_QUESTION_RE,
    INTERROGATIVES,
    KEY_CHUNK_RE,
    KEY_ROWS,
    KEY_RUNS_RE,
    NOT_DICTATED_AFTER,
    NOT_MASH_RE,
    OTHER_KEY_ROWS,
    PHATIC_RE,
    RELATIVE_CLAUSE_RE,
    REPEATED_CHUNK_RE,
    RHETORICAL_RE,
    SENTENCE_END_RE,
    SUBJECT_FIRST_AUX,
    SUBJECTS,
    THANKS_RE,
    WH_CLAUSE_RE,
)
from services.router.prefilter import Prefiltered
from services.router.time_words import times_replaced
from services.router.typos import correct
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
    lower = window.replace("\u2019", "'").replace("\u2018", "'").lower().strip()
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


_VOWELS = frozenset("aeiouy")
_CONSONANT_RUN_RE = re.compile(r"[^aeiouy]{6,}")
# Four or five keys along a row ("asdf", "poiuy"), three neighbouring home-row keys (not "fgh" of "afghan" nor "dsa" of
# "lindsay"): sets, so a token's pieces are looked up rather than searched for along every row.
_ROW_RUNS = frozenset(row[i : i + n] for row in KEY_ROWS for n in (4, 5) for i in range(len(row) - n + 1))
_HOME_ROW_TRIPLES = frozenset(row[i : i + 3] for row in KEY_ROWS[1::3] for i in range(len(row) - 2)) - {"fgh", "dsa"}
_ROW_LETTERS = tuple(frozenset(row) for row in KEY_ROWS[:3])
_HOME_ROW_LETTERS = frozenset("asdfghjkl")
_ZIGZAG_MIN = 8
_DIGIT_WALK_MIN = 6
_LATIN_MARKS_MIN = 4
_STRUCK_SYMBOLS_MIN = 6
_SENTENCE_MARKS = frozenset(".,!?'\u2026")
_LETTER_RUN_RE = re.compile(r"[a-z]+")
# Two symbol keys or more held down in turn and a key or three struck at one end: ".....,,,,kkj", "]]]][[[[aqz".
_HELD_IN_TURN_RE = re.compile(
    r"(?:([^\w\s])\1{2,}){2,}(?P<tail>[a-z0-9]{1,3})|(?P<head>[a-z0-9]{1,3})(?:([^\w\s])\4{2,}){2,}")
_SHORT_WORDS = frozenset("ok okay k kk no yes yep yup ya so oh ah hi yo why wat wut ty me you u i a".split())


@lru_cache(maxsize=4096)  # the same words come back message after message
def is_mash_token(token: str) -> bool:
    """Whether one lower-case token looks like keyboard mashing rather than a word or a laugh."""
    if len(token) < 3 or not token.isalpha() or NOT_MASH_RE.match(token):
        return False
    if REPEATED_CHUNK_RE.fullmatch(token) or KEY_RUNS_RE.fullmatch(token):  # "jjjjjjj", "dfgdfgdfg", "pppplllooo"
        return True
    # "heyyy" and "sooooo" are words said slowly (searched first: most words have no letter three times in a row)
    collapsed = ELONGATION_RE.sub(r"\1", token) if ELONGATION_RE.search(token) else token
    if collapsed != token and len(collapsed) <= 3 and not _VOWELS.intersection(collapsed):
        return True  # "zzzzxxxx": runs of two keys with no vowel to say slowly ("hmmm", "brrr" are spared above)
    token = collapsed
    if len(token) <= 3:  # "lkj": only the unmistakable short ones, to spare acronyms like "css"
        return len(token) == 3 and any(token in row for row in KEY_ROWS)
    vowels = sum(ch in _VOWELS for ch in token)
    rare_ratio = sum(token[i : i + 2] not in COMMON_BIGRAMS for i in range(len(token) - 1)) / (len(token) - 1)
    letters = frozenset(token)
    return (
        vowels == 0
        or rare_ratio >= 0.4
        or _CONSONANT_RUN_RE.search(token) is not None
        or _along_a_row(token)
        or ((chunk := KEY_CHUNK_RE.fullmatch(token)) is not None and any(chunk[1] in row for row in KEY_ROWS))
        # Typed along one row ("qpwoeiruty") or walking from key to neighbouring key ("plokijuh", "qazwsxedc"), with
        # letter pairs English rarely has: no word of the MiniLM vocabulary (tests/test_router_forms.py).
        or (len(token) >= 8 and rare_ratio >= 0.2 and any(letters <= row for row in _ROW_LETTERS))
        # Or along one row and on for a key or two off it: "qwpoeirutyxm".
        or (len(token) >= _ZIGZAG_MIN + 2 and rare_ratio >= 0.2 and any(
            sum(ch in row for ch in token) >= len(token) - 2 for row in _ROW_LETTERS))
        or (len(token) >= 6 and rare_ratio >= 0.25 and _neighbouring_keys(token) >= 0.75)
        or (letters <= _HOME_ROW_LETTERS and len(token) >= 6 and vowels * 5 <= len(token))
        # Three neighbouring home-row keys in a long token ("asdkjhasd"): no English word has one but "afghan" and
        # "lindsay" (checked against the MiniLM vocabulary by tests/test_router_classes.py).
        or (len(token) >= 6 and any(token[i : i + 3] in _HOME_ROW_TRIPLES for i in range(len(token) - 2)))
        or _zigzag(token)
    )


def _zigzag(token: str) -> bool:
    """Whether a token of eight letters or more walks along the keyboard between two rows, one key up or down and on
    at every letter ("awsedrftgyhu", "plokijuh"); no word of the MiniLM vocabulary does."""
    if len(token) < _ZIGZAG_MIN or not all(key in _KEY_AT for key in token):
        return False
    steps = [(_KEY_AT[b][0] - _KEY_AT[a][0], _KEY_AT[b][1] - _KEY_AT[a][1])
             for a, b in zip(token, token[1:], strict=False)]
    way = 1 if steps[0][1] > 0 else -1
    return all(abs(rows) == 1 and 0 < way * columns <= 1 for rows, columns in steps)


def _along_a_row(token: str) -> bool:
    """Whether a token of four letters or more is, or has five letters typed, along one keyboard row ("qwerty")."""
    if len(token) == 4:
        return token in _ROW_RUNS
    return any(token[i : i + 5] in _ROW_RUNS for i in range(len(token) - 4))


def _keys_between_symbols(view: TextView) -> bool:
    """One run of single letters between symbols, no word of two letters in it: "k;l;k;l'#" (not ":-)", "x.x", nor
    letters spelt out with dots or slashes: "a.s.a.p", "r&b"), or keys held down among more symbols than letters."""
    token = view.raw.strip()
    letters = sum(ch.isalpha() for ch in token)
    symbols = [ch for ch in token if not ch.isalnum()]
    spelt = set(symbols) <= set("./-&'")
    # Or a key held down among more brackets and symbols than letters: "}}}]]]ooo0o" (not "lol!!!", "hmm???").
    held = len(symbols) > len(token) - len(symbols) and not set(symbols) <= set(".,!?'-…")
    # Or a key or two struck inside a run of mixed symbols: ".,.,.,m.,.," (not "k......", "...ok").
    struck = (len(symbols) >= _STRUCK_SYMBOLS_MIN and len(set(symbols)) >= 2 and len(symbols) >= 4 * (len(token) - len(
        symbols)) and not token[0].isalnum() and not token[-1].isalnum())
    # Or a key or two struck at one end of a run of symbols that keeps changing key: "..//..,,mn", "=-=-=-0-0" (not
    # sentence marks alone, "ok?!?!?!", nor one change, "5/5!!!!!!").
    changes = sum(a != b for a, b in zip(symbols, symbols[1:], strict=False))
    struck = struck or (len(symbols) >= _STRUCK_SYMBOLS_MIN and changes >= 3 and len(symbols) >= 3 * (
        len(token) - len(symbols)) and not set(symbols) <= _SENTENCE_MARKS)
    # Or one symbol key held down and a key or two struck at its end: "~~~~~~~~~2e", "######4r" (not "!!!!!!ok").
    struck = struck or (len(symbols) >= _STRUCK_SYMBOLS_MIN and len(set(symbols)) == 1 and len(token) - len(
        symbols) <= 2 and not set(symbols) <= _SENTENCE_MARKS and (token[0].isalnum() or token[-1].isalnum()))
    # Or two symbol keys held down in turn, a key or three struck at one end, no word: ";;;;;'''p" (not "ok...!!!").
    turn = _HELD_IN_TURN_RE.fullmatch(token.lower())
    struck = struck or (turn is not None and (turn["tail"] or turn["head"]) not in _SHORT_WORDS and NOT_MASH_RE.match(
        turn["tail"] or turn["head"]) is None)
    return " " not in token and (struck or _struck_in_chunks(token) or (
        letters >= 3 and len(symbols) >= 2 and not spelt and all(
            len(word) < 2 or (held and len(set(word)) <= 2) for word in view.words)))


def _struck_in_chunks(token: str) -> bool:
    """Runs of three keys or more with no vowel and no letter pair English has, joined by symbols and no space:
    "xkq!!!zpv" (not "css/html", "brb...ttyl", "kfc/bbq": each of those has a word or a common pair)."""
    runs = _LETTER_RUN_RE.findall(token.lower())
    return len(runs) >= 2 and all(
        len(run) >= 3 and not _VOWELS.intersection(run) and NOT_MASH_RE.match(run) is None
        and not any(run[i : i + 2] in COMMON_BIGRAMS for i in range(len(run) - 1)) for run in runs)


def _is_other_mash(token: str) -> bool:
    """Whether a token in another alphabet is mashed: keys held down in turn, five keys along one row of its keyboard,
    or Korean letters never joined into syllables, at least three different ones ("ㅁㄴㅇㄹㅎ"; "ㅋㅋㅋㅋ" laughs)."""
    if _latin_marks_alone(token):
        return True
    if HANGUL_JAMO_RE.fullmatch(token):
        return len(token) >= 4 and len(set(token)) >= 3
    if KEY_RUNS_RE.fullmatch(token):  # "ггггшшшшщщщщ": keys held down in turn
        return True
    return len(token) >= 5 and any(token[i : i + 5] in row for row in OTHER_KEY_ROWS for i in range(len(token) - 4))


def _digit_row_walk(token: str) -> bool:
    """Whether a token of six keys or more walks down and along between the digit row and the row under it, digit and
    letter in turn, each letter under its digit or the next one ("1q2w3e4r", "8u7y6t5r4e"; not "a1b2c3", "4x4")."""
    if len(token) < _DIGIT_WALK_MIN or not token.isalnum():
        return False
    first_digit = token[0].isdigit()
    for i, ch in enumerate(token):
        if ch.isdigit() != (first_digit == (i % 2 == 0)) or (not ch.isdigit() and ch not in KEY_ROWS[0]):
            return False
    if all(abs((int(d) - 1) % 10 - KEY_ROWS[0].index(k)) <= 1 for d, k in (
            (a, b) if a.isdigit() else (b, a) for a, b in zip(token, token[1:], strict=False))):
        return True
    # Or digits and letters each walking one key at a time the same way, a key or two apart ("9u8y7t6r").
    digits = [(int(ch) - 1) % 10 for ch in token if ch.isdigit()]
    keys = [KEY_ROWS[0].index(ch) for ch in token if not ch.isdigit()]
    steps = {b - a for run in (digits, keys) for a, b in zip(run, run[1:], strict=False)}
    return len(steps) == 1 and abs(steps.pop()) == 1


def _mash_round_digits(token: str) -> bool:
    """Whether a token of letters with a digit or two struck among them is mashed once the digits are left out, eight
    letters or more ("qpzmwoxn3eiru"; not texting's "gr8", "l8r", "w8ing")."""
    letters = "".join(ch for ch in token if not ch.isdigit())
    return len(letters) >= 8 and len(token) - len(letters) <= 2 and letters.isalpha() and is_mash_token(letters)


def _latin_marks_alone(token: str) -> bool:
    """Whether a token of four letters or more is made only of accented or extra Latin letters, no plain one: the keys
    at a Nordic or German keyboard's edge struck in turn ("ðþæöðþ", "øåæøå"); every word written in a Latin alphabet
    has a plain letter in it ("Ære", "øl", "Ýmir")."""
    return len(token) >= _LATIN_MARKS_MIN and not any(ch.isascii() for ch in token) and all(
        unicodedata.name(ch, "").startswith("LATIN") for ch in token)


# Where each letter sits on a keyboard: (row, column), each row set off a quarter key from the one above.
_KEY_AT = {key: (row, column + 0.25 * row) for row, keys in enumerate(KEY_ROWS[:3]) for column, key in enumerate(keys)}


def _neighbouring_keys(token: str) -> float:
    """The share of a token's letter pairs typed on neighbouring keys (side by side or one row apart)."""
    pairs = list(zip(token, token[1:], strict=False))
    near = sum(a != b and a in _KEY_AT and b in _KEY_AT and abs(_KEY_AT[a][0] - _KEY_AT[b][0]) <= 1
               and abs(_KEY_AT[a][1] - _KEY_AT[b][1]) <= 1 for a, b in pairs)
    return near / len(pairs) if pairs else 0.0


def text_features(view: TextView) -> dict[str, float]:
    """Length, sentence count, punctuation-only, emoji-only and keyboard-mash signals."""
    without_emoji = EMOTICON_RE.sub(" ", EMOJI_RE.sub(" ", view.raw))
    has_emoji = without_emoji != view.raw
    has_alnum = any(ch.isalnum() for ch in without_emoji)
    alpha = [w for w in view.words if w.isalpha()]
    other = [w for w in view.lower.split() if w.isalpha() and not w.isascii()]  # another alphabet's words
    mashed = sum(is_mash_token(w) for w in alpha) + sum(_is_other_mash(w) for w in other)
    mash = mashed / (len(alpha) + len(other)) if alpha or other else 0.0
    if not alpha and not other and view.words:  # no word of letters: keys held with digits ("7777777777")
        mash = sum((len(w) >= HELD_DIGITS_MIN and HELD_DIGITS_RE.fullmatch(w) is not None) or _digit_row_walk(w)
                   or _mash_round_digits(w) for w in view.words) / len(view.words)
    if not mash and _keys_between_symbols(view):
        mash = 1.0
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
    question_mark = "?" in view.raw and not rhetorical
    # "You'll never guess who turned up": the question word is the announcement's, the news follows it.
    opener = [] if announced else body[1:2] if body[:1] and body[0] in HEDGES else body[:1]
    lower = view.lower[announced.end():] if announced else view.lower
    clauses = lower if question_mark or ", wh" not in lower else RELATIVE_CLAUSE_RE.sub(
        lambda match: match[0] if match[1] in CLAUSE_LEADS or " or " in lower[:match.start()] else (
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
