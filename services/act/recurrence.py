"""Recurrence rules of scheduled items: validation into a canonical string, and the next occurrence.

Stored forms: an RRULE subset (``FREQ=HOURLY|DAILY|WEEKLY|MONTHLY|YEARLY`` with ``INTERVAL``,
``BYDAY``, ``BYMONTHDAY``, ``UNTIL``) or ``CRON:m h dom mon dow``. Plain words ("daily",
"weekdays", "every monday and thursday", "every 2 hours") are normalised to the RRULE form.
Occurrences are computed on the wall clock of the item's zone, so 09:00 stays 09:00 across DST.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from services.act.when import WEEKDAYS, resolve_local

FREQS = ("HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
DAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
WORDS = {
    "hourly": "FREQ=HOURLY", "daily": "FREQ=DAILY", "every day": "FREQ=DAILY", "weekly": "FREQ=WEEKLY",
    "every week": "FREQ=WEEKLY", "monthly": "FREQ=MONTHLY", "every month": "FREQ=MONTHLY", "yearly": "FREQ=YEARLY",
    "annually": "FREQ=YEARLY", "every year": "FREQ=YEARLY", "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "every weekday": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "weekends": "FREQ=WEEKLY;BYDAY=SA,SU",
    "every weekend": "FREQ=WEEKLY;BYDAY=SA,SU",
}
_EVERY_N_RE = re.compile(r"^every (\d+) (hour|day|week|month|year)s?$")
_EVERY_DAYS_RE = re.compile(r"^every ((?:[a-z]+)(?:(?:, ?| and | & )[a-z]+)*)$")
CRON_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
SEARCH_DAYS = 366 * 5  # give up looking for a cron match after five years (e.g. "31 2 *": never)


class RecurrenceError(ValueError):
    """A recurrence rule that cannot be understood."""


@dataclass(frozen=True)
class Rule:
    freq: str
    interval: int = 1
    by_day: tuple[int, ...] = ()
    by_month_day: tuple[int, ...] = ()
    until: datetime | None = None


def normalize_rule(text: str) -> str:
    """The canonical stored form of a rule, or ``RecurrenceError``."""
    raw = " ".join(text.strip().split())
    lowered = raw.lower().removeprefix("rrule:")
    if lowered in WORDS:
        return WORDS[lowered]
    if match := _EVERY_N_RE.match(lowered):
        freq = {"hour": "HOURLY", "day": "DAILY", "week": "WEEKLY", "month": "MONTHLY", "year": "YEARLY"}[match[2]]
        return _canonical(Rule(freq, interval=_positive(match[1])))
    if match := _EVERY_DAYS_RE.match(lowered):
        days = re.split(r", ?| and | & ", match[1])
        return _canonical(Rule("WEEKLY", by_day=tuple(sorted({_weekday(day) for day in days}))))
    if lowered.startswith("cron:") or re.fullmatch(r"[\d*/,\-]+( [\d*/,\-]+){4}", lowered):
        fields = lowered.removeprefix("cron:").split()
        _cron_sets(fields)
        return "CRON:" + " ".join(fields)
    return _canonical(parse_rrule(raw.removeprefix("RRULE:").removeprefix("rrule:")))


def parse_rrule(text: str) -> Rule:
    """Parse ``FREQ=...;INTERVAL=...`` (the supported subset)."""
    parts: dict[str, str] = {}
    for item in filter(None, text.upper().split(";")):
        key, sep, value = item.partition("=")
        if not sep or key not in {"FREQ", "INTERVAL", "BYDAY", "BYMONTHDAY", "UNTIL"}:
            raise RecurrenceError(f"unsupported recurrence part {item!r}; use daily, weekly, weekdays, 'every "
                                  "monday', 'every 2 hours', FREQ=...;INTERVAL=...;BYDAY=... or CRON:m h dom mon dow")
        parts[key] = value
    if parts.get("FREQ") not in FREQS:
        raise RecurrenceError(f"recurrence needs FREQ= one of {', '.join(FREQS)}")
    by_day = tuple(sorted({_day_code(code) for code in parts.get("BYDAY", "").split(",") if code}))
    by_month_day = tuple(sorted({_month_day(day) for day in parts.get("BYMONTHDAY", "").split(",") if day}))
    return Rule(parts["FREQ"], _positive(parts.get("INTERVAL", "1")), by_day, by_month_day, _until(parts.get("UNTIL")))


def describe_rule(rule_text: str) -> str:
    """A stored rule as a person says it: "FREQ=WEEKLY;BYDAY=SU" → "every Sunday" (a reply had said "repeating
    FREQ=WEEKLY;BYDAY=SU"); a cron rule as its fields."""
    if rule_text.startswith("CRON:"):
        return f"on the schedule {rule_text.removeprefix('CRON:')}"
    try:
        rule = parse_rrule(rule_text)
    except RecurrenceError:
        return rule_text
    unit = {"HOURLY": "hour", "DAILY": "day", "WEEKLY": "week", "MONTHLY": "month", "YEARLY": "year"}[rule.freq]
    every = f"every {unit}" if rule.interval == 1 else f"every {rule.interval} {unit}s"
    names = [WEEKDAYS[day].capitalize() for day in rule.by_day]
    if rule.by_day == (0, 1, 2, 3, 4):
        every = "every weekday"
    elif rule.by_day == (5, 6):
        every = "every weekend"
    elif names:
        days = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        every = f"every {days}" if rule.interval == 1 else f"every {rule.interval} weeks on {days}"
    if rule.by_month_day:
        every += " on day " + ", ".join(str(day) for day in rule.by_month_day)
    return every + (f" until {rule.until:%d %B %Y}" if rule.until else "")


def next_occurrence(rule_text: str, anchor_local: datetime, after: datetime, zone: tzinfo) -> datetime | None:
    """First occurrence strictly after ``after``, on the wall-clock schedule started at ``anchor_local``.

    Args:
        rule_text: a canonical rule from ``normalize_rule``.
        anchor_local: the item's first (or previous) due time in its zone; gives the time of day.
        after: aware instant; usually now or the occurrence that just fired.
        zone: the item's zone.
    Returns None when the rule has ended (UNTIL) or never matches.
    """
    anchor_local = anchor_local.astimezone(zone)
    if rule_text.startswith("CRON:"):
        return _next_cron(_cron_sets(rule_text[5:].split()), after.astimezone(zone), zone)
    rule = parse_rrule(rule_text)
    if rule.freq == "HOURLY":
        candidates = _hourly(rule, anchor_local, after)
    else:
        candidates = _by_date(rule, anchor_local, after.astimezone(zone).date(), zone)
    for candidate in candidates:
        if rule.until is not None and candidate > rule.until:
            return None
        if candidate > after:
            return candidate
    return None


def _hourly(rule: Rule, anchor: datetime, after: datetime) -> list[datetime]:
    step = timedelta(hours=rule.interval)
    skip = max(0, int((after - anchor) / step))
    return [anchor + step * (skip + n) for n in range(3)]


def _by_date(rule: Rule, anchor: datetime, after_day: date, zone: tzinfo) -> list[datetime]:
    wall, start = anchor.timetz().replace(tzinfo=None), anchor.date()
    days: list[date] = []
    # Scan from the day before ``after`` (not from the anchor), keeping the anchor's alignment.
    day = first = max(start, after_day - timedelta(days=1))
    while len(days) < 3 and (day - first).days < SEARCH_DAYS:
        if _matches(rule, start, day):
            days.append(day)
        day += timedelta(days=1)
    return [resolve_local(datetime.combine(d, wall), zone) for d in days]


def _matches(rule: Rule, start: date, day: date) -> bool:
    if rule.freq == "DAILY":
        return (not rule.by_day or day.weekday() in rule.by_day) and (day - start).days % rule.interval == 0
    if rule.freq == "WEEKLY":
        weeks = (day - timedelta(days=day.weekday()) - (start - timedelta(days=start.weekday()))).days // 7
        weekdays = rule.by_day or (start.weekday(),)
        return day.weekday() in weekdays and weeks % rule.interval == 0
    months = (day.year - start.year) * 12 + day.month - start.month
    if rule.freq == "MONTHLY":
        return day.day in (rule.by_month_day or (start.day,)) and months % rule.interval == 0
    return (day.month, day.day) == (start.month, start.day) and (day.year - start.year) % rule.interval == 0


def _next_cron(sets: list[set[int]], after_local: datetime, zone: tzinfo) -> datetime | None:
    minutes, hours, month_days, months, weekdays = sets
    dom_any, dow_any = len(month_days) == 31, len(weekdays) == 7
    day = after_local.date()
    for _ in range(SEARCH_DAYS):
        cron_dow = (day.weekday() + 1) % 7  # cron counts Sunday as 0
        dom_ok, dow_ok = day.day in month_days, cron_dow in weekdays
        # Cron's rule: when both day fields are restricted, either one matching is enough.
        day_ok = (dom_ok or dow_ok) if not (dom_any or dow_any) else (dom_ok and dow_ok)
        if day.month in months and day_ok:
            for hour in sorted(hours):
                for minute in sorted(minutes):
                    candidate = resolve_local(datetime(day.year, day.month, day.day, hour, minute), zone)
                    if candidate > after_local:
                        return candidate
        day += timedelta(days=1)
    return None


def _cron_sets(fields: list[str]) -> list[set[int]]:
    if len(fields) != 5:
        raise RecurrenceError("a cron rule needs 5 fields: minute hour day-of-month month day-of-week")
    sets = [_cron_field(field, low, high) for field, (low, high) in zip(fields, CRON_RANGES, strict=True)]
    sets[4] = {0 if day == 7 else day for day in sets[4]}
    return sets


def _cron_field(field: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for part in field.split(","):
        base, _, step_text = part.partition("/")
        step = _positive(step_text) if step_text else 1
        if base == "*":
            start, end = low, high
        else:
            start_text, _, end_text = base.partition("-")
            if not start_text.isdigit() or (end_text and not end_text.isdigit()):
                raise RecurrenceError(f"cron field {field!r} is not numeric")
            start, end = int(start_text), int(end_text or (high if step_text else start_text))
        if not low <= start <= end <= high:
            raise RecurrenceError(f"cron field {field!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return values


def _canonical(rule: Rule) -> str:
    parts = [f"FREQ={rule.freq}"]
    if rule.interval != 1:
        parts.append(f"INTERVAL={rule.interval}")
    if rule.by_day:
        parts.append("BYDAY=" + ",".join(DAY_CODES[d] for d in rule.by_day))
    if rule.by_month_day:
        parts.append("BYMONTHDAY=" + ",".join(str(d) for d in rule.by_month_day))
    if rule.until is not None:
        parts.append("UNTIL=" + rule.until.strftime("%Y%m%dT%H%M%SZ"))
    return ";".join(parts)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1 or int(text) > 1000:
        raise RecurrenceError(f"interval must be a whole number from 1 to 1000, got {text!r}")
    return int(text)


def _weekday(word: str) -> int:
    word = word.strip().rstrip("s")
    for index, name in enumerate(WEEKDAYS):
        if len(word) >= 3 and name.startswith(word[:3]):
            return index
    raise RecurrenceError(f"{word!r} is not a day of the week")


def _day_code(code: str) -> int:
    if code.strip() not in DAY_CODES:
        raise RecurrenceError(f"BYDAY needs day codes like MO,TU; got {code!r}")
    return DAY_CODES.index(code.strip())


def _month_day(value: str) -> int:
    if not value.strip().isdigit() or not 1 <= int(value) <= 31:
        raise RecurrenceError(f"BYMONTHDAY needs days 1-31; got {value!r}")
    return int(value)


def _until(value: str | None) -> datetime | None:
    if value is None:
        return None
    for fmt in ("%Y%m%dT%H%M%SZ", "%Y%m%d"):
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise RecurrenceError(f"UNTIL must look like 20261231 or 20261231T090000Z; got {value!r}")
