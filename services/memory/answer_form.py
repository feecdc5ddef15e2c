"""How the person asked to be answered: in a language ("please always answer me in English, even if I write to you in
Norwegian by accident") and with times on the 24-hour clock ("always give me times in 24 hour format").

Told either in its notes, the 1.5B answered a question typed in Norwegian in Norwegian and wrote "4:20 PM": the
message's language and the model's habit win over a line of memory. So both are read from the person's facts as they
stand now, like what they refuse (``services/memory/refusals``; ``context.py`` reads them on every turn): the language
is named in an instruction just before the message (workers/generation), which the model follows, and a reply to a
person who asked for the 24-hour clock is rewritten (services/llm/clock.py, through the reply guard). The newest fact
that speaks of either decides: "12-hour times are fine now" told later turns the clock off; "the shop is open 24
hours" speaks of no clock.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Protocol


class Dated(Protocol):
    """A fact with when it was told (a recall hit, a profile fact)."""

    @property
    def text(self) -> str: ...

    @property
    def at(self) -> dt.datetime | None: ...


LANGUAGES = ("english", "spanish", "french", "german", "portuguese", "italian", "dutch", "norwegian", "swedish",
             "danish", "finnish", "icelandic", "polish", "czech", "slovak", "hungarian", "romanian", "greek",
             "turkish", "ukrainian", "russian", "arabic", "hebrew", "persian", "hindi", "urdu", "bengali", "tamil",
             "chinese", "mandarin", "cantonese", "japanese", "korean", "vietnamese", "thai", "indonesian", "malay",
             "tagalog", "filipino", "swahili", "irish", "welsh", "catalan", "basque", "afrikaans", "kazakh")
_LANGUAGE = "|".join(LANGUAGES)
_ANSWERING = r"(?:answer|reply|respond|write|talk|speak|text|message)(?:s|ing)?"
_OBJECT = r"(?:me|the user|us)(?!')"  # the person, not "the user's mother"
# A standing request for the answers' language: an answering verb asked of the assistant (told to the person's
# "me", after "please" or at a clause's start, or "you to …"), then "in X" ("always answer the user in English",
# "please reply in Spanish", "talk to me in French from now on", "I'd like you to write in German"), or X spoken to
# the person ("speak English with me"). Not what the person does ("the user writes in Norwegian at work", "speaks
# French with the user's mother"). The first language named is the one wanted: "… in English, even if I write to
# you in Norwegian".
ANSWER_IN = re.compile(rf"(?:\b{_ANSWERING}(?: back)? (?:to )?{_OBJECT}|(?:^|[:;,.!]\s*|\b(?:please|pls|plz|kindly) |"
                       rf"\b(?:you|engram) (?:to |will |should |must )?)(?:and )?(?:always |only |just )?{_ANSWERING})"
                       rf"(?: (?:always|only|just))?(?: back)? (?:in|with) (?:plain |simple )?"
                       rf"(?P<language>{_LANGUAGE})\b"
                       rf"|\b(?:speak|talk|write)(?:s|ing)? (?P<spoken>{_LANGUAGE}) (?:to|with) {_OBJECT}",
                       re.IGNORECASE)
LANGUAGE_SQL = (rf"\m(answer|reply|respond|write|talk|speak|text|message)(s|ing)?\M.*\m(in|with) "
                rf"(plain |simple )?({_LANGUAGE})\M")


def answer_language(facts: Iterable[Dated]) -> str:
    """The language the person asked to be answered in ("English"): the newest of ``facts`` asking for one decides;
    "" when none does. A question ("can you answer in French?") is no standing request."""
    asking = [(fact, match) for fact in facts
              if (match := ANSWER_IN.search(fact.text)) is not None and not fact.text.rstrip().endswith("?")]
    if not asking:
        return ""
    _fact, match = max(asking, key=lambda pair: _when(pair[0]))
    return (match.group("language") or match.group("spoken")).capitalize()


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
CLOCK_SQL = (r"(24|twenty.?four).?(hours?|hrs?|h)\M.?(format|time|clock|notation|style|system)|"
             r"(times?|clocks?|hours).{0,40}(in|on|as|using|use) (the )?(24|twenty.?four)|military time|"
             r"(12|twelve).?(hours?|hrs?|h)\M.?(format|time|clock)|am ?(/|and|or|&) ?pm|a\.m\./p\.m\.")
SPEAKS = re.compile(CLOCK_SQL.replace(r"\M", r"\b"), re.IGNORECASE)


def wants_24_hour(fact: str) -> bool:
    """Whether one fact asks for times on the 24-hour clock."""
    return WANTS.search(fact) is not None and REFUSES.search(fact) is None


def clock_wanted(facts: Iterable[Dated]) -> bool:
    """Whether the newest of ``facts`` that speaks of the clock asks for the 24-hour one."""
    spoken = [fact for fact in facts if SPEAKS.search(fact.text) is not None]
    if not spoken:
        return False
    return wants_24_hour(max(spoken, key=_when).text)


def _when(fact: Dated) -> dt.datetime:
    """When a fact was told, comparable whatever its zone (undated: the oldest)."""
    if fact.at is None:
        return dt.datetime.min.replace(tzinfo=dt.UTC)
    return fact.at if fact.at.tzinfo is not None else fact.at.replace(tzinfo=dt.UTC)


# The facts that say how the person wants answers, as a PostgreSQL regular expression: read on every turn (context.py).
SQL_PATTERN = f"{LANGUAGE_SQL}|{CLOCK_SQL}"
