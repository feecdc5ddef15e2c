"""Time expressions in a query ("last May", "in March 2024", "two weeks ago") → a date window.

Recall uses the window as one more candidate arm and a boost, because questions about *when*
("what did I do last May?") share few words with the turns that answer them.
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = {name: index + 1 for index, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
MONTHS.update({name[:3]: number for name, number in list(MONTHS.items())})
MONTHS["sept"] = 9
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3}
UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
MAX_AGO_DAYS = 100 * 365  # "3000 years ago" is no period anyone's memory holds (and overflows datetime)

# Every month name and abbreviation, longest first (a regular expression alternation).
MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH_RE = re.compile(rf"\b(?:(last|this|in|during|since)\s+)?({MONTH_ALT})\.?(?:,?\s+(?:of\s+)?((?:19|20)\d\d))?\b")
# A named day: "31 July, 2023", "8th of December 2023", "July 31st, 2023".
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE_RE = re.compile(rf"\b{_ORDINAL}\s+(?:of\s+)?({MONTH_ALT})\.?,?\s+{_YEAR}\b")
_DATE_US_RE = re.compile(rf"\b({MONTH_ALT})\.?\s+{_ORDINAL},?\s+{_YEAR}\b")
_AGO_RE = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple|few)\s+(?:of\s+)?"
                     r"(day|week|month|year)s?\s+ago\b")
_LAST_UNIT_RE = re.compile(r"\b(last|this|past)\s+(week|month|year|weekend)\b")
_YEAR_RE = re.compile(r"\b(?:in|during|back in|since)\s+((?:19|20)\d\d)\b")
_ISO_RE = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_DAY_WORDS = {"yesterday": 1, "today": 0, "tonight": 0, "this morning": 0}

Window = tuple[dt.datetime, dt.datetime]


def time_window(text: str, now: dt.datetime) -> Window | None:
    """The period a query refers to, as [start, end) in UTC, or None when it names none."""
    lowered = text.lower()
    for parse in (_iso_day, _named_day, _month, _ago, _last_unit, _year, _day_word):
        window = parse(lowered, now)
        if window is not None:
            return window
    return None


def _day(date: dt.date) -> Window:
    start = dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC)
    return start, start + dt.timedelta(days=1)


def _month_window(year: int, month: int) -> Window:
    start = dt.datetime(year, month, 1, tzinfo=dt.UTC)
    end = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=dt.UTC)
    return start, end


def _iso_day(text: str, now: dt.datetime) -> Window | None:
    match = _ISO_RE.search(text)
    if not match:
        return None
    try:
        return _day(dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3))))
    except ValueError:
        return None


def _named_day(text: str, now: dt.datetime) -> Window | None:
    match = _DATE_RE.search(text)
    if match:
        day, name, year = match.groups()
    else:
        match = _DATE_US_RE.search(text)
        if not match:
            return None
        name, day, year = match.groups()
    try:
        return _day(dt.date(int(year), MONTHS[name], int(day)))
    except ValueError:
        return None


def _month(text: str, now: dt.datetime) -> Window | None:
    for match in _MONTH_RE.finditer(text):
        qualifier, name, year = match.groups()
        if name == "may" and not (qualifier or year):
            continue  # "may" alone is almost always the verb
        if name in {"mar", "jan", "jun", "jul", "aug", "oct", "nov", "dec", "sep", "apr", "feb"} and not (
                qualifier or year):
            continue  # bare abbreviations collide with words ("mar", "dec")
        month = MONTHS[name]
        if year:
            return _month_window(int(year), month)
        # "last May" in November means this year's May; in March it means last year's.
        candidate = now.year if month < now.month or (qualifier != "last" and month == now.month) else now.year - 1
        if qualifier == "this":
            candidate = now.year
        return _month_window(candidate, month)
    return None


def _ago(text: str, now: dt.datetime) -> Window | None:
    match = _AGO_RE.search(text)
    if not match:
        return None
    amount = int(match.group(1)) if match.group(1).isdigit() else NUMBERS[match.group(1)]
    days = amount * UNIT_DAYS[match.group(2)]
    if days > MAX_AGO_DAYS:
        return None
    # "Two weeks ago" is rarely exact: allow a quarter of the span (at least a day) either side.
    slack = dt.timedelta(days=max(1.0, days / 4))
    try:
        point = now - dt.timedelta(days=days)
        return point - slack, point + slack
    except OverflowError:  # a window reaching before year 1
        return None


def _last_unit(text: str, now: dt.datetime) -> Window | None:
    match = _LAST_UNIT_RE.search(text)
    if not match:
        return None
    which, unit = match.groups()
    today = dt.datetime(now.year, now.month, now.day, tzinfo=dt.UTC)
    if unit in ("week", "weekend"):
        week_start = today - dt.timedelta(days=today.weekday())
        if which == "this":
            return week_start, week_start + dt.timedelta(days=7)
        if which == "past":
            return today - dt.timedelta(days=7), now + dt.timedelta(seconds=1)
        return week_start - dt.timedelta(days=7), week_start
    if unit == "month":
        if which == "last":
            previous = today.replace(day=1) - dt.timedelta(days=1)
            return _month_window(previous.year, previous.month)
        return (today - dt.timedelta(days=30), now) if which == "past" else _month_window(now.year, now.month)
    year = now.year - 1 if which == "last" else now.year
    return dt.datetime(year, 1, 1, tzinfo=dt.UTC), dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC)


def _year(text: str, now: dt.datetime) -> Window | None:
    match = _YEAR_RE.search(text)
    if not match:
        return None
    year = int(match.group(1))
    return dt.datetime(year, 1, 1, tzinfo=dt.UTC), dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC)


def _day_word(text: str, now: dt.datetime) -> Window | None:
    for word, days_back in _DAY_WORDS.items():
        if re.search(rf"\b{word}\b", text):
            return _day((now - dt.timedelta(days=days_back)).date())
    return None


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# A day or a time said in a sentence: "the 1st of September", "March", "on Friday", "tomorrow", "10pm"; and as much
# of the world writes them: "28/05", "12/4", "17h30", "16hs", "14:00" ("end of year show, 28/05, 17h30" told the
# show's day and time, and was no fact without them; not "24/7").
DATED = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)|{MONTH_ALT}|(?:{'|'.join(WEEKDAYS)})s?|tomorrow|tonight|"
                   r"next (?:week|month|year)|\d{1,2}(?::\d{2})?\s?(?:am|pm)|"
                   r"(?!24/7\b)(?:[12]?\d|3[01])/(?:0?[1-9]|1[0-2])(?:/(?:\d\d)?\d\d)?|\d{1,2}[:h][0-5]\d|\d{1,2}\s?hs)"
                   r"(?![\w/])", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(?:(?P<day>yesterday|tomorrow|last night)"
    r"|(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple|few)\s+(?:of\s+)?"
    r"(?P<unit>day|week|month|year)s?\s+ago"
    r"|(?P<which>last|this|next|past)\s+(?P<span>week|weekend|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b(?!\s*\()", re.IGNORECASE)


def spoken_day(date: dt.date) -> str:
    """"20 October 2023": the day as people write it (and as a small model copies it whole into an answer)."""
    return f"{date.day} {date.strftime('%B')} {date.year}"


# A date written day.month, as much of Europe writes it, after a word saying it is one: "birthday 22.9",
# "born 3.11.1968", "due on 14.2." (not "22.9 km", nor a version "on 2.5.1" or a price).
_DOTTED = re.compile(r"\b(?:birthday|bday|born|anniversary|wedding|due|deadline|on|from|until|till|by|since)\s+"
                     r"(?P<day>\d{1,2})\.(?P<month>\d{1,2})(?:\.(?P<year>(?:19|20)\d\d)(?!\.?\d))?(?!\.?\d)"
                     r"(?!\s?(?:km|kg|cm|mm|m|g|l|%|°|miles|mph)\b)", re.IGNORECASE)


def anchored(text: str, said_at: dt.datetime | dt.date | None) -> str:
    """A remembered line's relative time words with the dates they meant when it was said, and a day.month date
    with its month's name.

    "We went camping yesterday", said on 20 October 2023 → "… yesterday (19 October 2023)". A model reading the
    line later cannot count back from its date: asked when they went camping, a 0.5B answered "yesterday" or
    today's date. "Satu has birthday 22.9" → "… 22.9 (22 September)": the 1.5B read it as "22 November".
    """
    text = _DOTTED.sub(_named_month, text)
    if said_at is None:
        return text
    day = said_at.date() if isinstance(said_at, dt.datetime) else said_at
    return _RELATIVE.sub(lambda match: f"{match.group(0)} ({_meant(match, day)})", text)


def _named_month(match: re.Match[str]) -> str:
    day, month = int(match["day"]), int(match["month"])
    if not (1 <= day <= 31 and 1 <= month <= 12):
        return match.group(0)
    year = f" {match['year']}" if match["year"] else ""
    return f"{match.group(0)} ({day} {dt.date(2000, month, 1).strftime('%B')}{year})"


def _meant(match: re.Match[str], day: dt.date) -> str:
    said = spoken_day(day)
    if match["day"]:
        return spoken_day(day + dt.timedelta(days=1 if match["day"].lower() == "tomorrow" else -1))
    if match["unit"]:
        count = NUMBERS.get(match["count"].lower()) or int(match["count"])
        unit = match["unit"].lower()
        if unit == "day":
            return spoken_day(day - dt.timedelta(days=count))
        if unit == "week":
            return f"{count} week{'s' if count > 1 else ''} before {said}"
        if unit == "month":
            month = (day.year * 12 + day.month - 1) - count
            return f"{dt.date(month // 12, month % 12 + 1, 1).strftime('%B %Y')}"
        return str(day.year - count)
    which, span = match["which"].lower(), match["span"].lower()
    step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
    if span in WEEKDAYS:
        back = (day.weekday() - WEEKDAYS.index(span)) % 7 or (7 if step else 0)
        forward = (WEEKDAYS.index(span) - day.weekday()) % 7 or 7
        return spoken_day(day + dt.timedelta(days=forward) if step == 1 else day - dt.timedelta(days=back))
    if span in ("week", "weekend"):
        return f"the {span} {['before', 'of', 'after'][step + 1]} {said}"
    if span == "month":
        month = day.year * 12 + day.month - 1 + step
        return dt.date(month // 12, month % 12 + 1, 1).strftime("%B %Y")
    return str(day.year + step)
