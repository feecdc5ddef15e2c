"""Due times for reminders: what the model writes ("tomorrow at 9", ISO, "in 2 hours") → an aware UTC instant.

Everything relative is resolved against *now in the person's time zone*, so "tomorrow at 9"
means 09:00 of the person's tomorrow, whatever zone the worker runs in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from services.act.config import DueWords
from services.memory.timewords import MONTH_ALT, MONTHS, WEEKDAYS
from services.router.time_words import TEXTED_TOMORROW

PAST_SLACK = timedelta(seconds=60)
_WEEKDAY_RE = ("|".join(f"{day[:3]}(?:{day[3:]})?" for day in WEEKDAYS).replace("tue(?:sday)?", "tue(?:s|sday)?")
               .replace("wed(?:nesday)?", "wed(?:s|nesday)?").replace("thu(?:rsday)?", "thu(?:rs|rsday)?"))
# A length said in words: "in two hours", "in twenty minutes", "in a couple of hours" (the planner was left them).
AMOUNT_WORDS = {**{word: float(n) for n, word in enumerate(
    "one two three four five six seven eight nine ten eleven twelve".split(), start=1)},
    "fifteen": 15.0, "twenty": 20.0, "thirty": 30.0, "forty": 40.0, "forty-five": 45.0, "forty five": 45.0,
    "fifty": 50.0, "sixty": 60.0, "ninety": 90.0, "a couple of": 2.0, "couple of": 2.0}
_RELATIVE_RE = re.compile(
    rf"^(?:in\s+)?\+?((?:a )?few|an?|\d+(?:\.\d+)?|half an?|{'|'.join(sorted(AMOUNT_WORDS, key=len, reverse=True))})"
    r"\s*(m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)(?:\s+from now)?$")
_ORDINAL = r"(?:st|nd|rd|th)"
# A date in numbers: "12/03", "25/03", "3/25/2031". No setting or locale says which part is the day, so the day is the
# part over 12 ("25/03" is 25 March, "03/25" March 25); "12/03" could be either and is asked about, never guessed.
_NUMERIC_DATE_RE = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?\b(?!/)")
_MONTH_NAMES = list(MONTHS)[:12]  # "january" … "december", as timewords lists them first
# A calendar date: "14 december", "the 14th of december", "december 14th", "dec 14", or "the 14th" (of the month).
_DATE_RE = (rf"(?:the\s+)?(\d{{1,2}}){_ORDINAL}?(?:\s+of)?\s+({MONTH_ALT})\b"
            rf"|({MONTH_ALT})\s+(?:the\s+)?(\d{{1,2}}){_ORDINAL}?(?![\d:])"
            rf"|(?:the\s+)?(\d{{1,2}}){_ORDINAL}")
_DAY_RE = re.compile(rf"\b(?:(day after tomorrow)|(today|tonight|tomorrow|tmrw|tmr)|(?:(next|this)\s+)?({_WEEKDAY_RE})|"
                     rf"(\d{{4}}-\d{{2}}-\d{{2}})|{_DATE_RE})\b")
_TIME_RE = re.compile(r"\b(?:(noon|midday|midnight|morning|afternoon|evening|night)|"
                      r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|o'?clock)?)(?=\s|$)")
_FILLER_RE = re.compile(r"\b(?:at|on|in the|the|around|about|by)\b|[,.]")
# An hour in words: "at ten", "ten o'clock", "seven pm" ("remind me on Monday at ten o'clock" was refused).
HOUR_WORDS = {word: hour for hour, word in enumerate(
    "one two three four five six seven eight nine ten eleven twelve".split(), start=1)}
_HOUR_WORD_RE = re.compile(rf"(?:(?<=\bat )({'|'.join(HOUR_WORDS)})\b|\b({'|'.join(HOUR_WORDS)})"
                           r"(?=\s*(?:o'?clock|am|pm|a\.m\.|p\.m\.)))")
# A clock time as said: "half past nine", "quarter to ten", "twenty past 6", "half nine" (half past nine, in
# Britain) → "9:30", "9:45", "6:20", "9:30", so that "tomorrow at half past nine" is 09:30, as "tomorrow at 9" is 09:00
# (the planner model was left to guess it and set 15:30).
_CLOCK_MINUTES = {"five": 5, "ten": 10, "quarter": 15, "a quarter": 15, "twenty": 20, "twenty-five": 25,
                  "twenty five": 25, "half": 30}
_HOUR = rf"(\d{{1,2}}|{'|'.join(HOUR_WORDS)})"
_SPOKEN_CLOCK_RE = re.compile(rf"\b(?:({'|'.join(sorted(_CLOCK_MINUTES, key=len, reverse=True))})"
                              rf"(?: minutes)? (past|after|to) {_HOUR}|half {_HOUR}(?! (?:an?|hours?|of)\b))\b")
# A clock time's part of the day said after it: "at 6:30 in the evening", "at 6 tonight", "10:45 in the morning".
_PART_AFTER_RE = re.compile(r"\s+(?:in the|this|at|(tomorrow))\s+(morning|afternoon|evening|night)\b|\s+(tonight)\b")
_TEXTED_TOMORROW_RE = re.compile(rf"\b(?:{TEXTED_TOMORROW})\b")  # "2moro at 7", "tomorow" (as the router reads them)
# ... and said before it: "this evening at 8", "tomorrow night at 11", "tonight at 10", "friday morning 7:30".
_PART_FIRST_RE = re.compile(r"\b(?:(?P<this>this)\s+(?=morning|afternoon|evening|night))?"
                            r"(?:(?P<part>morning|afternoon|evening|night)|(?P<tonight>tonight))\s+(?:at\s+)?"
                            r"(?P<clock>\d{1,2}(?::\d{2})?)(?!\s*(?:am|pm|a\.m\.|p\.m\.)|[\d:])(?:\s*o'?clock)?")
_AT_SIGN_RE = re.compile(r"\s*@\s*")  # "thurs @ 3"
# A clock time as much of the world writes it: "at 18h" is 18:00, "9h30" 09:30 and "5h" 05:00 (a 24-hour clock), "18.30"
# and "7.15pm" are "18:30" and "7:15pm", "18:00h" is "18:00" (read after the relative forms, so "in 18h" stays
# eighteen hours from now and "in 1.5 hours" a length).
_CLOCK_MARKS_RE = re.compile(r"\b(\d{1,2})(?:h(\d\d)?|[.:](\d\d)h?)(?=\s|$|,|[ap]\.?m\b)")
DAY_ONLY_HOUR = 9  # a reminder for a day without its hour ("remind me on Friday to …") is due at 09:00 that day
# A time tied to an event of the person's day, not the clock ("after my shift", "when I get home", "after work"): no
# hour to set it at; with a day ("on Friday after my shift") it is that day's (services/act/reminder_request.py).
EVENT_TIME = re.compile(r"^(?:after|before|when|whenever|once|as soon as|on (?:my|the) way)\s+(?=[a-z])(?!.*\d)")
AFTERNOON_UNTIL = 6  # a bare hour up to this one is p.m. ("at 6"), from 7 it is a.m. ("at 7", "at 9")
PART_TIMES = {"noon": time(12), "midday": time(12), "midnight": time(0), "morning": time(9),
              "afternoon": time(15), "evening": time(19), "night": time(21)}
UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


class DueTimeError(ValueError):
    """The due time cannot be understood, is ambiguous or lies in the past; ``code`` says which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class DueTime:
    utc: datetime
    local: datetime

    def describe(self) -> str:
        """How the person reads it: ``Sunday 22 November 2026, 09:00 CET``."""
        return self.local.strftime("%A %d %B %Y, %H:%M %Z").strip()


def resolve_local(naive: datetime, zone: tzinfo) -> datetime:
    """Attach ``zone`` to a wall-clock time; a time skipped by a DST jump moves forward by the jump."""
    aware = naive.replace(tzinfo=zone, fold=0)
    round_trip = aware.astimezone(UTC).astimezone(zone)
    if round_trip.replace(tzinfo=None) != naive:  # inside a spring-forward gap
        return round_trip
    return aware


def parse_due(spec: str, now: datetime, zone: tzinfo, words: DueWords | None = None) -> DueTime:
    """Parse a due-time spec relative to ``now`` (aware) in ``zone``; the result lies in the future.

    Accepted: ISO datetime (naive = local, or with an offset / Z), relative ("in 2 hours", "+30m", "in a few
    minutes": ``words``, configs/act.toml [due]), and day + time phrases ("tomorrow at 9", "monday 8:30am", "today
    17:00", "2026-11-22 at 9", "25/03 at 3pm"; "12/03" is ambiguous).
    """
    text = " ".join(spec.strip().lower().split())
    text = _SPOKEN_CLOCK_RE.sub(_clock, text)
    text = _HOUR_WORD_RE.sub(lambda match: str(HOUR_WORDS[match.group(1) or match.group(2)]), text)
    if not text:
        raise DueTimeError("missing_time", "no due time given")
    if EVENT_TIME.match(text):
        raise DueTimeError("missing_time", f"{text!r} says no time of day (e.g. 'at 6pm')")
    now_local = now.astimezone(zone)
    moment = (_iso(spec.strip(), zone) or _relative(text, now, words or DueWords())
              or _phrase(_NUMERIC_DATE_RE.sub(_named_date, text), now_local, zone))
    if moment <= now - PAST_SLACK:
        raise DueTimeError("past", f"{moment.astimezone(zone).isoformat(timespec='minutes')} is in the past "
                                   f"(now is {now_local.isoformat(timespec='minutes')})")
    return DueTime(utc=moment.astimezone(UTC), local=moment.astimezone(zone))


def _clock(match: re.Match[str]) -> str:
    minutes_said, direction, hour_said, half_hour = match.groups()
    hour_text = hour_said or half_hour
    hour = int(hour_text) if hour_text.isdigit() else HOUR_WORDS[hour_text]
    if not 1 <= hour <= 12:
        return match.group(0)  # "half 17" is no clock time said aloud: left for the parser to refuse
    minutes = 30 if half_hour else _CLOCK_MINUTES[minutes_said]
    if direction == "to":
        hour, minutes = hour - 1 or 12, 60 - minutes
    return f"{hour}:{minutes:02d}"


def _iso(spec: str, zone: tzinfo) -> datetime | None:
    if not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}", spec):
        return None
    try:
        parsed = datetime.fromisoformat(spec.replace(" ", "T", 1))
    except ValueError as exc:
        raise DueTimeError("invalid", f"not a valid date and time: {spec!r} ({exc})") from None
    return resolve_local(parsed, zone) if parsed.tzinfo is None else parsed


def _named_date(match: re.Match[str]) -> str:
    """A date in numbers said with its month's name ("25/03" → "25 march", "3/25/2031" → "2031-03-25"), the day
    being the part over 12 (or both parts, when they are the same)."""
    first, second, year = int(match.group(1)), int(match.group(2)), match.group(3)
    if not (1 <= min(first, second) <= 12 and max(first, second) <= 31):
        raise DueTimeError("invalid", f"{match.group(0)} is not a date")
    if first != second and max(first, second) <= 12:
        raise DueTimeError("ambiguous", f"which date you mean: {first} {_MONTH_NAMES[second - 1].title()} or "
                                        f"{second} {_MONTH_NAMES[first - 1].title()}")
    day, month = (first, second) if second <= 12 else (second, first)
    if year is None:
        return f"{day} {_MONTH_NAMES[month - 1]}"
    try:
        return date(int(year) + (2000 if len(year) == 2 else 0), month, day).isoformat()
    except ValueError:
        raise DueTimeError("invalid", f"{match.group(0)} is not a date") from None


def _relative(text: str, now: datetime, words: DueWords) -> datetime | None:
    match = _RELATIVE_RE.match(text)
    if not match:
        return None
    amount_text, unit = match.groups()
    if amount_text.endswith("few"):  # "in a few minutes": the configured length, not a guess of the planner's
        few = {"m": words.a_few_minutes, "h": words.a_few_hours}.get(unit[0])
        if few is None:
            raise DueTimeError("invalid", f"how long is {text!r}? say a number of {unit}")
        return now + timedelta(seconds=few * UNIT_SECONDS[unit[0]])
    amount = (0.5 if amount_text.startswith("half") else 1.0 if amount_text in ("a", "an")
              else AMOUNT_WORDS.get(amount_text) or float(amount_text))
    if amount <= 0:
        raise DueTimeError("invalid", f"relative time must be positive: {text!r}")
    return now + timedelta(seconds=amount * UNIT_SECONDS[unit[0]])


def _phrase(text: str, now_local: datetime, zone: tzinfo) -> datetime:
    text = _CLOCK_MARKS_RE.sub(_clock_marks, _TEXTED_TOMORROW_RE.sub("tomorrow", text))
    text = _with_meridiem(_AT_SIGN_RE.sub(" at ", text).strip())
    day_match = _DAY_RE.search(text)
    rest = text[: day_match.start()] + " " + text[day_match.end():] if day_match else text
    time_match = _TIME_RE.search(rest)
    leftover = _FILLER_RE.sub(" ", rest[: time_match.start()] + rest[time_match.end():] if time_match else rest)
    if leftover.strip() or not (day_match or time_match):
        raise DueTimeError("invalid", f"could not understand the due time {text!r}; use ISO local time "
                                      "like 2026-11-22T09:00, 'tomorrow at 9' or 'in 2 hours'")
    wall = _wall_time(time_match, day_match)
    if day_match is None:  # a bare time: the next time the clock shows it
        day = now_local.date()
        if resolve_local(datetime.combine(day, wall), zone) <= now_local:
            day += timedelta(days=1)
    else:
        day = _day(day_match, now_local, wall, zone)
    return resolve_local(datetime.combine(day, wall), zone)


def _clock_marks(match: re.Match[str]) -> str:
    hour, h_minutes, minutes = match.groups()
    if minutes is not None:
        return f"{hour}:{minutes}"
    return f"{int(hour):02d}:{h_minutes or '00'}"  # "18h", "5h": the 24-hour clock (no afternoon guessed for "05")


def _meridiem(part: str, hour: int) -> str:
    small_hours = part == "night" and (hour < 5 or hour == 12)  # "2 at night", "12 at night" (midnight)
    return "am" if part == "morning" or small_hours else "pm"


def _part_first(match: re.Match[str]) -> str:
    """ "this evening at 8" → "today at 8 pm", "tomorrow night at 11" → "tomorrow at 11 pm", "tonight at 10" →
    "tonight at 10 pm" (read as 10:00, the morning, before)."""
    this, part, clock = match.group("this"), match.group("part") or "night", match.group("clock")
    day = "today " if this else "tonight " if match.group("tonight") else ""
    return f"{day}at {clock} {_meridiem(part, int(clock.split(':')[0]))}"


def _with_meridiem(text: str) -> str:
    """The clock's half of the day said with it, made its am/pm: "at 6:30 in the evening" → "at 6:30 pm", "at 6
    tonight" → "at 6 pm tonight", "at 2 at night" → "at 2 am", "this evening at 8" → "today at 8 pm"."""
    text = _PART_FIRST_RE.sub(_part_first, text)
    clock = _clock_of(text)
    if clock is None or clock.group(2) is None or clock.group(4):
        return text
    part = _PART_AFTER_RE.search(text, clock.end())
    if part is None:
        return text
    tomorrow, part_word, tonight = part.groups()
    meridiem = _meridiem(part_word or "night", int(clock.group(2)))
    day = " tonight" if tonight else " tomorrow" if tomorrow else ""  # the day it names stays
    return f"{text[:clock.end()]} {meridiem}{text[clock.end():part.start()]}{day}{text[part.end():]}"


def _clock_of(text: str) -> re.Match[str] | None:
    """The first clock time (or part of the day) said, not a date's day: "on 25 march in the evening" is the evening of
    25 March (its "25" was read as the hour, "25 pm")."""
    dates = [match.span() for match in _DAY_RE.finditer(text) if any(match.groups()[5:])]
    return next((clock for clock in _TIME_RE.finditer(text)
                 if not any(start <= clock.start() < end for start, end in dates)), None)


def _wall_time(time_match: re.Match[str] | None, day_match: re.Match[str] | None) -> time:
    if time_match is None:
        if day_match is not None and day_match.group(2) == "tonight":
            return PART_TIMES["night"]
        raise DueTimeError("missing_time", "a time of day is needed (e.g. 'tomorrow at 9')")
    part, hour_text, minute_text, meridiem = time_match.groups()
    if part:
        return PART_TIMES[part]
    hour, minute = int(hour_text), int(minute_text or 0)
    if meridiem and meridiem[0] in "ap":
        if not 1 <= hour <= 12:
            raise DueTimeError("invalid", f"{hour}{meridiem} is not a time")
        hour = hour % 12 + (12 if meridiem[0] == "p" else 0)
    elif 1 <= hour <= AFTERNOON_UNTIL and not hour_text.startswith("0"):
        hour += 12  # "thursday at 3" is the afternoon: nobody asks for a 3 a.m. reminder without saying so
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise DueTimeError("invalid", f"{hour}:{minute:02d} is not a time of day")
    return time(hour, minute)


def _day(match: re.Match[str], now_local: datetime, wall: time, zone: tzinfo) -> date:
    after_tomorrow, word, qualifier, weekday, iso_day, *calendar = match.groups()
    today = now_local.date()
    if any(calendar):
        return _calendar_day(calendar, now_local, wall, zone)
    if after_tomorrow:
        return today + timedelta(days=2)
    if word:
        return today + timedelta(days=1) if word.startswith(("tom", "tm")) else today
    if iso_day:
        try:
            return date.fromisoformat(iso_day)
        except ValueError:
            raise DueTimeError("invalid", f"{iso_day} is not a date") from None
    target = next(i for i, name in enumerate(WEEKDAYS) if name.startswith(weekday[:3]))
    ahead = (target - today.weekday()) % 7
    if qualifier == "next" and ahead == 0:
        ahead = 7
    candidate = today + timedelta(days=ahead)
    if resolve_local(datetime.combine(candidate, wall), zone) <= now_local:
        candidate += timedelta(days=7)  # "monday 9am" said on a Monday afternoon means next week
    return candidate


def _calendar_day(groups: list[str | None], now_local: datetime, wall: time, zone: tzinfo) -> date:
    """The next date (after now, at ``wall``) that is "14 december" (this year or next) or "the 14th" (this
    month or the next month that has it)."""
    day_first, month_after, month_first, day_after, day_alone = groups
    day = int(day_first or day_after or day_alone or 0)
    month_name = month_first or month_after
    if not 1 <= day <= 31:
        raise DueTimeError("invalid", f"there is no day {day} in a month")
    year, month = now_local.year, now_local.month
    wanted = MONTHS[month_name] if month_name else None
    for _ in range(25):  # two years of months: enough to find any date that exists
        if wanted is None or month == wanted:
            try:
                candidate = date(year, month, day)
            except ValueError:
                candidate = None  # 31 June: no such date this month
            if candidate and resolve_local(datetime.combine(candidate, wall), zone) > now_local:
                return candidate
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    raise DueTimeError("invalid", f"there is no {day} {month_name} in a calendar")
