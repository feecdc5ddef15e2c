"""Lexicons of when: days, months, clock times, parts of the day, durations.

Compiled once at import (pure data, no I/O), like ``services/router/words.py``; a time says when a reminder is due
(``has_time``), and is no pointer at an earlier turn ("this week" points at a date). Where a text says its times is
found once (``time_spans``), however many signals ask.
"""

from __future__ import annotations

import re
from functools import lru_cache

from services.router.ascii_twin import grouped

DAYS = r"mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?"
MONTHS = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?|" \
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
_HOUR_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon"
_DAY_NAMES = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tues?|wed|thu|thurs|fri"
# "tomorrow" as texted and mistyped ("2moro at 7"): a time to the router, and read as tomorrow by services/act/when.py.
TEXTED_TOMORROW = "tmrw|tmr|tomorow|tommorow|2moro|2morrow|2mrw"
_DAY_PARTS = r"(?:morning|afternoon|evening|night|lunchtime|teatime)s?"
TIME_RE = grouped(
    r"(?:^|(?<=\s))@ ?\d{1,2}(?:[:.]\d\d)?\b|"  # "remind me 2 call the vet @ 3": texted
    # A day said with its part of the day is one time: "Monday morning", "tomorrow evening" ("morning" is no text).
    # ("sat" and "sun" are words before they are days: "I sat morning and night by her bed").
    rf"\b(?:(?:today|tomorrow|{TEXTED_TOMORROW}|(?:on )?(?:{_DAY_NAMES})s?) {_DAY_PARTS}|"
    rf"today|tonight|tonite|tomorrow|{TEXTED_TOMORROW}|noon|midnight|daily|weekly|monthly|"
    rf"this (?:morning|afternoon|evening|weekend|week|month|year|term|semester|season|spring|summer|autumn|winter)|"
    # A day picked in each month, before the day alone: "the last Friday of every month" ("last" points at no turn).
    rf"(?:on )?the (?:first|1st|second|2nd|third|3rd|fourth|4th|last|final) (?:(?:{DAYS})\w*|day|weekday|weekend) of "
    r"(?:every|each|the|this|next) (?:month|year|term|quarter)|"
    # A day and its half hour as said in Britain: "Thursday half 3" (half past three), before the day alone.
    rf"next (?:week|month|year|weekend|{DAYS})|(?:on )?(?:{DAYS})s?(?: at)? half (?:\d{{1,2}}|{_HOUR_WORDS})(?! of\b)|"
    rf"(?:on )?(?:{DAYS})s?|"
    rf"at \d{{1,2}}(?::\d\d)?|\d{{1,2}}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock)|\d{{1,2}}:\d\d|"
    # The hour as much of the world writes it: "at 18h", "9h30" (not "open 24h": no "at" and no minutes).
    rf"(?:at|by|from|until|till) \d{{1,2}}h(?:\d\d)?|\d{{1,2}}h\d\d|"
    # A span counted from now: "90 minutes from now", "an hour and a half from now".
    rf"(?:a|an|\d+|a few|a couple of|half an|{_HOUR_WORDS}|fifteen|twenty|thirty|forty(?:-five)?|ninety) "
    r"(?:min|mins|minutes?|hours?|hrs?|days?|weeks?)(?: and a half)? from now|"
    rf"in (?:a|an|\d+|a few|few|a couple of|couple of|half an|{_HOUR_WORDS}|fifteen|twenty|thirty|forty(?:-five)?|"
    r"ninety) (?:min|mins|minutes?|hours?|hrs?|days?|weeks?|months?)|"
    rf"every (?:day|week|month|morning|evening|night|{DAYS})|(?:{MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?|"
    # The day before its month, as most of the world writes it: "on 3 January", "by 14 Feb" ("3 may" needs its "on").
    rf"(?:on |by |from |until |till )?\d{{1,2}} (?!may\b)(?:{MONTHS})|on \d{{1,2}} may|"
    # ... and in numbers: "on 25/03", "by 12/03/2031" (not "1/2 a cup": a preposition or a year with it).
    r"(?:on|by|from|until|till|before) \d{1,2}/\d{1,2}(?:/\d\d(?:\d\d)?)?(?![\d/])|"
    r"\d{1,2}/\d{1,2}/\d\d(?:\d\d)?(?![\d/])|"
    rf"\d{{1,2}}(?:st|nd|rd|th)|end of (?:the )?(?:day|week|month)|(?:after|before) (?:work|lunch|dinner|school|bed)|"
    rf"later today|in the (?:morning|afternoon|evening)|at (?:lunch|dinner|breakfast|bedtime|night)|"
    # "at ten past six" is one time, not "at ten" and then "past six".
    rf"(?:at )?(?:quarter|half|twenty|ten|five) (?:past|to) (?:\d{{1,2}}|{_HOUR_WORDS})|"
    rf"at (?:{_HOUR_WORDS})(?: o'?clock)?|"
    # An hour said with its part of the day: "seven in the evening", "6 tomorrow morning".
    rf"(?:\d{{1,2}}|{_HOUR_WORDS}) (?:in the (?:morning|afternoon|evening)|tonight|(?:tomorrow|this) (?:morning|"
    r"afternoon|evening|night))|"
    # "at half five": half past five, as said in Britain (not "half an hour", "half one of them").
    rf"(?:at|by|around|from|until|till) half (?:\d{{1,2}}|{_HOUR_WORDS})(?! of\b))\b"
)


# A time told of what already happened is no time for what is asked: "My boss rang at 7am ... set reminders for all of
# it" (rang at 7, remind when?). The clause up to its end goes.
TOLD_AT_RE = re.compile(
    r"\b(?:rang|rung|phoned|called|texted|messaged|emailed|came(?: round| over| by)?|arrived|turned up|showed up|"
    r"woke(?: up)?|got (?:in|home|here|back)|dropped by|popped round)(?: me| us)? (?:at|around|about|just after|"
    r"just before) [^,.;!?]*"
)


@lru_cache(maxsize=64)  # the skill, slot and reference signals and the request parse read the same texts
def time_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where ``text`` says a time ("at 6pm", "this week"): the spans of ``TIME_RE``'s matches, left to right, as
    ``TIME_RE.sub`` finds them; found once for a text that several signals read."""
    return tuple(match.span() for match in TIME_RE.finditer(text))


def says_time(text: str) -> bool:
    """``TIME_RE.search(text) is not None``, from the spans found once."""
    return bool(time_spans(text))


def times_replaced(text: str, mark: str) -> str:
    """``TIME_RE.sub(mark, text)`` (``mark`` a plain string, no backslash), from the spans found once."""
    pieces, end = [], 0
    for start, stop in time_spans(text):
        pieces += (text[end:start], mark)
        end = stop
    return "".join(pieces) + text[end:] if pieces else text


# An alarm or a timer may be given a duration instead of a time: "a timer for 10 minutes".
DURATION_RE = re.compile(
    r"\bfor (?:a|an|\d+|half an|a couple of|a few) (?:secs?|seconds?|mins?|minutes?|hours?|hrs?)\b"
)
# An alarm or a timer may be set "for" its hour: "set an alarm for 7", "a timer for 6:45 tomorrow" (not "for 7 people").
CLOCK_FOR_RE = re.compile(
    r"\bfor \d{1,2}(?:[:.]\d\d)?(?:\s*(?:am|pm))?(?=\W*$|\s+(?:tomorrow|tonight|today|please|pls|on|every|each|"
    r"in the)\b)"
)
