"""Clock times on the 24-hour clock, for a person who asked for it ("always give me times in 24 hour format").

Told so in its notes, and again just before the message, the 1.5B still wrote "Your pickup is at 4:20 PM" (three of
three): the reply is rewritten instead. "4:20 PM", "4.20 p.m.", "4pm" → "16:20", "16:20", "16:00"; "12:30 AM" →
"00:30"; "12 noon" → "12:00"; "7 in the morning" → "07:00"; a range "4-5 pm" → "16:00–17:00" (its first end takes
the second's half of the day). Only a number with its half of the day is a clock time: "at 4", "3.5 am" (not a
time), "PM" (a prime minister) and "16:20" stay as they are; "4 pm-ish" becomes "16:00-ish".

While a reply streams, the end of what came so far may still grow into a clock time ("4:20" before " PM"): it is
held back (``settled``) until the next chunk shows what it is.
"""

from __future__ import annotations

import re

# The half of the day after a number, as written: each form with or without a space before it.
HALVES = {"am": "am", "a.m.": "am", "a.m": "am", "pm": "pm", "p.m.": "pm", "p.m": "pm"}
WORDS = {"noon": "noon", "midnight": "midnight", "in the morning": "am", "in the afternoon": "pm",
         "in the evening": "pm", "at night": "night"}
MERIDIEMS = {**{f"{space}{form}": half for form, half in HALVES.items() for space in ("", " ")},
             **{f"{lead}{form}": half for form, half in WORDS.items() for lead in (" ", " o'clock ", " o\u2019clock ")}}
# Between the two ends of a range: "4-5 pm", "4 – 5 pm", "from 4 to 5 pm", "between 4 and 5 pm".
SEPARATORS = [*(f"{before}{dash}{after}" for dash in "-\u2013\u2014" for before in ("", " ") for after in ("", " ")),
              " to ", " until ", " till ", " and "]


def _alternatives(forms: list[str]) -> str:
    return "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))


def _prefixes(forms: list[str]) -> str:
    return _alternatives(sorted({form[:end] for form in forms for end in range(len(form) + 1)}))


START = r"(?<![\w.:,$\u00a3\u20ac])"  # not within a number, a word or an amount ("3.5 am", "A4 pm")
NUMBER = r"\d{1,2}(?!\d)(?:[:.]\d{2}(?!\d))?"
HALF = rf"(?:{_alternatives(list(MERIDIEMS))})(?![a-z0-9])"
SEPARATOR = _alternatives(SEPARATORS)
H24 = r"\d{1,2}[:.]\d{2}(?!\d)"
# The 1.5B gave both twice in three ("4.20 in the afternoon (16:20)"): the time said twice the same is said once.
CLOCK = re.compile(
    rf"{START}(?P<a>{NUMBER})(?P<ah>{HALF})?(?P<sep>{SEPARATOR})(?P<b>{NUMBER})(?P<bh>{HALF})"
    rf"|{START}(?P<t>{NUMBER})(?P<th>{HALF})(?P<again>[ ]?\({H24}\))?"
    rf"|{START}(?P<h>{H24})(?P<paren>[ ]?\((?P<p>{NUMBER})(?P<ph>{HALF})\))", re.IGNORECASE)
# What may still grow into a clock time: a number, a time, a range, or a whole one followed by spaces (the next
# character says whether "p.m." ended a sentence, and whether "am" was a word of its own).
MAYBE = re.compile(
    rf"\d{{1,2}}(?:[:.]\d{{0,2}})?|{NUMBER}(?:{_prefixes(list(MERIDIEMS))})"
    rf"|{NUMBER}(?:{HALF})?(?:{_prefixes(SEPARATORS)})|{NUMBER}(?:{HALF})?(?:{SEPARATOR})\d{{1,2}}(?:[:.]\d{{0,2}})?"
    rf"|{NUMBER}(?:{HALF})?(?:{SEPARATOR}){NUMBER}(?:{_prefixes(list(MERIDIEMS))})"
    rf"|(?:{NUMBER}(?:{HALF})?(?:{SEPARATOR}))?{NUMBER}{HALF}(?:[ ]?\({H24}\))?[ \t]*"
    rf"|{NUMBER}{HALF}[ ]?\(\d{{0,2}}(?:[:.]\d{{0,2}})?"
    rf"|{H24}[ ]?\((?:\d{{0,2}}(?:[:.]\d{{0,2}})?|{NUMBER}(?:{_prefixes(list(MERIDIEMS))})|{NUMBER}{HALF}\)?)",
    re.IGNORECASE)
CANDIDATE = re.compile(rf"{START}\d")
LONGEST_HELD = 60  # characters: more than the longest clock time ("12:30 o'clock in the afternoon until 1:30 ...")
# After "p.m." that ended its sentence the full stop stays: "Pickup is at 4 p.m." → "Pickup is at 16:00."
SENTENCE_ENDS = re.compile(r"$|[ \t]*\n|\s+[A-Z]")


def to_24_hour(text: str) -> str:
    """``text`` with its clock times on the 24-hour clock (the whole text: nothing held back)."""
    return _rewritten(text, len(text))


def settled(text: str) -> str:
    """The 24-hour rewrite of the part of ``text`` that can no longer change, while more text may follow: a
    trailing "4:20" (or "4 p", "4-5") is held back. What it returns for a text is a prefix of what it returns
    for any longer text the first continues."""
    cut = len(text)
    for match in CANDIDATE.finditer(text, max(0, len(text) - LONGEST_HELD)):
        if MAYBE.fullmatch(text, match.start()):
            cut = match.start()
            break
    return _rewritten(text, cut)


def _rewritten(text: str, cut: int) -> str:
    out: list[str] = []
    at = 0
    for match in CLOCK.finditer(text):
        if match.end() > cut:
            cut = min(cut, match.start())  # a time the cut falls inside is held back whole
            break
        out.append(text[at:match.start()])
        out.append(_clock(match, text))
        at = match.end()
    out.append(text[at:cut])
    return "".join(out)


def _clock(match: re.Match[str], text: str) -> str:
    said = match.group()
    stop = "." if said.endswith(".") and SENTENCE_ENDS.match(text, match.end()) else ""
    if match["t"] is not None:
        time = _hhmm(match["t"], _half(match["th"]))
        if time is None:
            return said
        again = match["again"] or ""
        return time + stop if _same(again, time) else time + again
    if match["h"] is not None:  # "16:20 (4:20 PM)"
        time = _hhmm(match["p"], _half(match["ph"]))
        if time is None:
            return said
        space = " " if match["paren"].startswith(" ") else ""
        return match["h"] if _same(match["h"], time) else f"{match['h']}{space}({time})"
    second_half = _half(match["bh"])
    second = _hhmm(match["b"], second_half)
    if second is None:
        return said
    words = match["sep"].strip()
    if words == "and" and not text[: match.start()].lower().endswith("between "):
        first = _hhmm(match["a"], _half(match["ah"])) if match["ah"] else match["a"]  # "buy 2 and 5 pm ..."
        return f"{first or match['a']}{match['sep']}{second}{stop}"
    first_half = _half(match["ah"]) if match["ah"] else _first_half(match["a"], match["b"], second_half)
    first = _hhmm(match["a"], first_half)
    if first is None:
        return said
    between = "\u2013" if words in ("-", "\u2013", "\u2014") else f" {words} "
    return f"{first}{between}{second}{stop}"


def _same(written: str, time: str) -> bool:
    """Whether ``written`` ("(16.20)", "", "16:20") is ``time`` ("16:20") again, or nothing."""
    digits = written.strip(" ()").replace(".", ":")
    return not digits or digits.zfill(5) == time


def _half(written: str) -> str:
    return MERIDIEMS[written.lower()]


def _first_half(first: str, second: str, half: str) -> str:
    """The half of the day of a range's first end, written without one: the second's, unless that would put it
    after the second ("11-1 pm" is 11:00–13:00; "11-12 pm" ends at noon)."""
    start, end = int(re.split(r"[:.]", first)[0]), int(re.split(r"[:.]", second)[0])
    if half == "pm" and start != 12 and (end == 12 or start > end):
        return "am"
    return half


def _hhmm(number: str, half: str) -> str | None:
    """"4:20" in the ``half`` of the day as "16:20"; None when it is not a time on the 12-hour clock."""
    parts = re.split(r"[:.]", number)
    hours, minutes = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    if not 1 <= hours <= 12 or minutes > 59:
        return None
    if half in ("noon", "midnight"):
        if hours != 12 or minutes:
            return None
        return "12:00" if half == "noon" else "00:00"
    if half == "night":  # "10 at night" is 22:00, "2 at night" 02:00
        half = "pm" if 6 <= hours <= 11 else "am"
    return f"{hours % 12 + (12 if half == 'pm' else 0):02d}:{minutes:02d}"
