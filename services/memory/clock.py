"""Whether the person asked for times on the 24-hour clock: "always give me times in 24 hour format", "am and pm is
confusing me", "military time please".

Told so in its notes, the 1.5B still wrote "4:20 PM"; a reply to a person who asked is rewritten instead
(services/llm/clock.py, through the reply guard). The newest of the person's facts that speaks of the clock
decides, so "12-hour times are fine now" told later turns it off; "the shop is open 24 hours" speaks of no clock.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Protocol

_24 = r"(?:24|twenty[- ]?four)[- ]?(?:hours?|hrs?|h)\b"
_AM_PM = r"(?:am|a\.m\.)\s*(?:/|and|or|&|\+)\s*(?:pm|p\.m\.)"
WANTS = re.compile(
    rf"\b{_24}[- ]?(?:format|time|times|clock|notation|style|system)\b"  # "24 hour format", "24h clock"
    rf"|\b(?:times?|clocks?|hours)\b[^.!?]{{0,40}}?\b(?:in|on|as|using|use)\s+(?:the\s+)?{_24}"  # "times in 24h"
    r"|\bmilitary time\b"
    rf"|\b(?:no|without|never|don'?t (?:use|want|like|give)|do not (?:use|want|like|give)|stop using|drop)\s+"
    rf"(?:the\s+)?{_AM_PM}"  # "no am/pm"
    rf"|\b{_AM_PM}\b[^.!?]{{0,20}}?\bconfus",  # "am and pm is confusing me"
    re.IGNORECASE)
# "I don't like the 24 hour clock", "never use 24h time": the clock spoken of, and not wanted.
REFUSES = re.compile(rf"\b(?:don'?t|do not|doesn'?t|not|never|no longer|hates?|dislikes?|instead of|rather than)\s+"
                     rf"(?:[\w']+\s+){{0,3}}{_24}", re.IGNORECASE)
# A fact that speaks of how clock times are written (as a PostgreSQL regular expression: read on every turn).
SQL_PATTERN = (r"(24|twenty.?four).?(hours?|hrs?|h)\M.?(format|time|clock|notation|style|system)|"
               r"(times?|clocks?|hours).{0,40}(in|on|as|using|use) (the )?(24|twenty.?four)|military time|"
               r"(12|twelve).?(hours?|hrs?|h)\M.?(format|time|clock)|am ?(/|and|or|&) ?pm|a\.m\./p\.m\.")
SPEAKS = re.compile(SQL_PATTERN.replace(r"\M", r"\b"), re.IGNORECASE)


class Dated(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def at(self) -> dt.datetime | None: ...


def wants_24_hour(fact: str) -> bool:
    """Whether one fact asks for times on the 24-hour clock."""
    return WANTS.search(fact) is not None and REFUSES.search(fact) is None


def clock_wanted(facts: Iterable[Dated]) -> bool:
    """Whether the newest of ``facts`` that speaks of the clock asks for the 24-hour one."""
    spoken = [fact for fact in facts if SPEAKS.search(fact.text) is not None]
    if not spoken:
        return False
    oldest = dt.datetime.min.replace(tzinfo=dt.UTC)
    newest = max(spoken, key=lambda fact: _aware(fact.at) if fact.at is not None else oldest)
    return wants_24_hour(newest.text)


def _aware(at: dt.datetime) -> dt.datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=dt.UTC)
