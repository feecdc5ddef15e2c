"""Keyboard mashing: whether a token, or a message's words, are keys struck rather than typed ("asdfgh", "jjjjjjj",
"ггггшшшш", "k;l;k;l'#"). Split out of ``services/router/textview.py``, whose ``text_features`` reads ``keyboard_mash``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from services.router.form_words import (
    COMMON_BIGRAMS,
    ELONGATION_RE,
    HANGUL_JAMO_RE,
    HELD_DIGITS_MIN,
    HELD_DIGITS_RE,
    KEY_CHUNK_RE,
    KEY_CHUNK_TAIL_RE,
    KEY_ROWS,
    KEY_RUNS_RE,
    NOT_MASH_RE,
    OTHER_KEY_ROWS,
    REPEATED_CHUNK_RE,
)

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
_HELD_KEYS_RE = re.compile(r"(?:(\S)\1+){3,}")
_KEY_SYMBOL_TURNS_RE = re.compile(r"([0-9a-z])([^\w\s.,!?'\u2026])(?:\1\2){3,}[0-9a-z]{0,2}")
_SHORT_WORDS = frozenset("ok okay k kk no yes yep yup ya so oh ah hi yo why wat wut ty me you u i a".split())


@lru_cache(maxsize=4096)  # the same words come back message after message
def is_mash_token(token: str) -> bool:
    """Whether one lower-case token looks like keyboard mashing rather than a word or a laugh."""
    if len(token) < 3 or not token.isalpha() or NOT_MASH_RE.match(token):
        return False
    if REPEATED_CHUNK_RE.fullmatch(token) or KEY_RUNS_RE.fullmatch(token):  # "jjjjjjj", "dfgdfgdfg", "pppplllooo"
        return True
    if _ALTERNATED_THEN_HELD_RE.fullmatch(token):  # two keys in turn, a third held: "wewewewqqq" (not "hahahaaa")
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
        # Three or four keys along a row typed twice and on for a key or few: "rtyrtyrtuu", "dfgdfgdfh".
        or (len(token) >= 8 and (chunk := KEY_CHUNK_TAIL_RE.fullmatch(token)) is not None and any(
            chunk[1] in row for row in KEY_ROWS))
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
        # Typed along one row for ten keys or more, then on for a few keys off it: "qwpoeirutyghv".
        or (len(token) >= _ZIGZAG_MIN + 2 and _row_run_mashed(token))
    )


# A whole row's length or more ("albuquerque" has eight top-row letters running, no ten).
_ROW_RUN_RE = re.compile("|".join(f"[{row}]{{{_ZIGZAG_MIN + 2},}}" for row in KEY_ROWS[:3]))
_ALTERNATED_THEN_HELD_RE = re.compile(r"([a-z])(?!\1)([a-z])(?:\1\2){2,}\1?(?!\1|\2)([a-z])\3{2,}")


def _row_run_mashed(token: str) -> bool:
    """Whether a long token holds ten keys or more along one row whose letter pairs English rarely has, as a mashed
    row alone does (``is_mash_token``'s row test, read on the run)."""
    for run in _ROW_RUN_RE.findall(token):
        rare = sum(run[i : i + 2] not in COMMON_BIGRAMS for i in range(len(run) - 1)) / (len(run) - 1)
        if rare >= 0.2:
            return True
    return False


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


def _keys_between_symbols(raw: str, words: tuple[str, ...]) -> bool:
    """One run of single letters between symbols, no word of two letters in it: "k;l;k;l'#" (not ":-)", "x.x", nor
    letters spelt out with dots or slashes: "a.s.a.p", "r&b"), or keys held down among more symbols than letters."""
    token = raw.strip()
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
    # Or three keys or more held down in turn, two symbols among them: "3333####%%" (not "!!!!????", "hmmm...").
    held_keys = _HELD_KEYS_RE.fullmatch(token) is not None and len(set(symbols) - _SENTENCE_MARKS) >= 2
    # Or a key and a symbol struck in turn, then a key or two: "0-0-0-0-0-9", "k/k/k/k/j" (not "1.1.1.1").
    struck = struck or held_keys or _KEY_SYMBOL_TURNS_RE.fullmatch(token.lower()) is not None
    turn = _HELD_IN_TURN_RE.fullmatch(token.lower())
    struck = struck or (turn is not None and (turn["tail"] or turn["head"]) not in _SHORT_WORDS and NOT_MASH_RE.match(
        turn["tail"] or turn["head"]) is None)
    return " " not in token and (struck or _struck_in_chunks(token) or (
        letters >= 3 and len(symbols) >= 2 and not spelt and all(
            len(word) < 2 or (held and len(set(word)) <= 2) for word in words)))


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
    if _latin_marks_alone(token) or _latin_keys_held(token):
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


_RUN_RE = re.compile(r"(.)\1+")


def _latin_keys_held(token: str) -> bool:
    """Whether a token of six letters or more, an accented one among them, is two or three Latin keys held down in turn
    with no vowel among them ("ñññmmmññ", "çççxxxxç"; not "ñandú", "zzzñ")."""
    if len(token) < 6 or not all(unicodedata.name(ch, "").startswith("LATIN") for ch in token):
        return False
    collapsed = _RUN_RE.sub(r"\1", token)
    keys = set(collapsed)
    bases = {unicodedata.normalize("NFD", ch)[0] for ch in keys}
    return len(collapsed) <= len(token) - 3 and 2 <= len(keys) <= 3 and not bases & _VOWELS and ELONGATION_RE.search(
        token) is not None


# Where each letter sits on a keyboard: (row, column), each row set off a quarter key from the one above.
_KEY_AT = {key: (row, column + 0.25 * row) for row, keys in enumerate(KEY_ROWS[:3]) for column, key in enumerate(keys)}


def _neighbouring_keys(token: str) -> float:
    """The share of a token's letter pairs typed on neighbouring keys (side by side or one row apart)."""
    pairs = list(zip(token, token[1:], strict=False))
    near = sum(a != b and a in _KEY_AT and b in _KEY_AT and abs(_KEY_AT[a][0] - _KEY_AT[b][0]) <= 1
               and abs(_KEY_AT[a][1] - _KEY_AT[b][1]) <= 1 for a, b in pairs)
    return near / len(pairs) if pairs else 0.0


def keyboard_mash(raw: str, lower: str, words: tuple[str, ...]) -> float:
    """The share of a message's words (``raw``, ``lower`` and ``words`` of its text view) that are keys mashed rather
    than typed (1.0 for keys struck between symbols)."""
    alpha = [w for w in words if w.isalpha()]
    other = [w for w in lower.split() if w.isalpha() and not w.isascii()]  # another alphabet's words
    mashed = sum(is_mash_token(w) for w in alpha) + sum(_is_other_mash(w) for w in other)
    mash = mashed / (len(alpha) + len(other)) if alpha or other else 0.0
    if not alpha and not other and words:  # no word of letters: keys held with digits ("7777777777")
        mash = sum((len(w) >= HELD_DIGITS_MIN and HELD_DIGITS_RE.fullmatch(w) is not None) or _digit_row_walk(w)
                   or _mash_round_digits(w) for w in words) / len(words)
    if not mash and _keys_between_symbols(raw, words):
        mash = 1.0
    return mash
