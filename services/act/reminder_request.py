"""A reminder request as people say it → the reminder's text and due time, without the planner model: "remind me
tomorrow at 9 to call the dentist", "at 7 remind me to take my vitamins", "remind me about the dentist friday 3pm",
"friday 3pm: dentist", "every sunday at 6pm"; the due time is read by ``services/act/when.py``."""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

from services.act.config import DueWords
from services.act.request_words import PLEASE_WORDS, POLITE, PlainAction, asks_again
from services.act.when import DAY_ONLY_HOUR, EVENT_TIME, WEEKDAYS, DueTime, DueTimeError, parse_due

REMIND = re.compile(POLITE + r"remind me\s+(?P<rest>.+?)\W*$")
# The time before the request: "at 7 remind me to take my vitamins" (once "every morning" is taken out).
REMIND_AFTER = re.compile(POLITE + r"(?P<due>[a-z0-9: .]+?),?\s+remind me\s+to\s+(?P<task>.+?)\W*$")
SET_REMINDER = re.compile(POLITE + r"(?:set(?: up)?|create|add|make)(?: me)?\s+an?\s+reminder\s+(?P<rest>.+?)\W*$")
# A reminder that repeats: "every morning", "each weekday", "every sunday" (taken out of the request, then the
# time left in it is the first one: "every sunday at 6pm" → first "sunday at 6pm", repeating every sunday).
DAILY_PARTS = ("morning", "afternoon", "evening", "night")
REPEATS = ("day", *DAILY_PARTS, "weekday", "week", *WEEKDAYS)
EVERY = re.compile(rf"\b(?:every|each)\s+(?P<every>{'|'.join(REPEATS)})s?\b")
# "the day after tomorrow at 9", "the 14th at 9": a planner's guess at them was a day off ("tomorrow at 10"), and the
# critic then asked the person to confirm the wrong time.
# "by 25/03", "by friday": a deadline's day is the reminder's (the planner was left "pay the rent by 25/03").
TIME_START = re.compile(r"^(?:at|on|in|by|tomorrow|tmrw|tmr|today|tonight|next|this|monday|tuesday|wednesday|thursday|"
                        r"friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun|\d|(?:the\s+)?day\s+after\b|the\s+\d|"
                        # a learner's "the Tuesday at half past six"
                        r"the\s+(?:mon|tue|wed|thu|fri|sat|sun))")


def reminder_action(text: str, now: datetime, zone: tzinfo, words: DueWords | None = None) -> PlainAction | None:
    """The reminder a plain "remind me …" or "set a reminder …" asks for, its time read as said, or None; a date in
    numbers that reads two ways ("12/03") is left for the schedule skill to ask about."""
    every = EVERY.search(text)
    if every:
        text = " ".join((text[: every.start()] + text[every.end():]).split())
    for task, due in _reminder_parts(text):
        task = task.rstrip(" .,;:!?")  # the sentence's end is no part of the task: "call mum." ("… mum. Tomorrow at 9")
        if every:
            due = _first_time(due, every["every"])
        if _POINTER_TASK.match(task):
            return None  # "remind me about it at 5": what it is was said before (the planner reads the conversation)
        said_when = TIME_START.match(due) or EVENT_TIME.match(due)  # "after work on Monday"
        if not task or not said_when or asks_again(task) or _CUT_TASK.search(task):
            continue
        try:
            due, first = _day_and_hour(due, now, zone, words)
        except DueTimeError as error:
            if error.code == "ambiguous" and not every:  # the skill asks which date was meant
                return PlainAction("schedule", {"operation": "create", "kind": "reminder", "text": task, "due": due})
            event = _event_of(due, task, now, zone, words)
            if event is None and _an_event(due, task) and error.code == "missing_time":
                # "remind me after work to call mum": no day to take the hour of; the skill asks the time of day
                repeat = {"recurrence": _recurrence(every["every"])} if every else {}
                return PlainAction("schedule", {"operation": "create", "kind": "reminder",
                                                "text": _with_event(task, due), "due": due, **repeat})
            if event is None:
                continue
            task, due, first = _with_event(task, event[1]), *event[0]
        if every and every["every"] == "weekday" and first.local.weekday() >= 5:
            due = f"on monday {due}"  # said at the weekend: the first weekday is Monday
        repeat = {"recurrence": _recurrence(every["every"])} if every else {}
        return PlainAction("schedule", {"operation": "create", "kind": "reminder", "text": task, "due": due, **repeat})
    return None


def _day_and_hour(due: str, now: datetime, zone: tzinfo, words: DueWords | None) -> tuple[str, DueTime]:
    """The due time as said, or a day without its hour ("on 3 January", "tomorrow") at that day's morning, said in the
    confirmation (the planner guessed one hour or asked to confirm another for the same words); ``DueTimeError``."""
    try:
        return due, parse_due(due, now, zone, words)
    except DueTimeError as error:
        if error.code != "missing_time" or EVENT_TIME.match(due):
            raise
    due = f"{due} at {DAY_ONLY_HOUR}"
    return due, parse_due(due, now, zone, words)


# A time tied to an event of the person's day rather than the clock: "on Friday after my shift", "tomorrow when I get
# home", "after work on Monday", "Thursday once the kids are in bed". The day is kept, at its hour if one is said, else
# as a day said alone (``DAY_ONLY_HOUR``, said in the confirmation), and the event goes into the reminder's text ("pay
# the fees after my shift"); the planner given it invented "5pm, repeating weekly" and asked to confirm that.
_EVENT_WORDS = 7
# A task starting with a thing, not a verb: the event went on past its " to " ("when I go | to the gym to …").
_NOT_A_TASK = re.compile(r"^(?:the|a|an|my|our|his|her|their|this|that|work|school|bed|town)\b")


def _event_of(due: str, task: str, now: datetime, zone: tzinfo, words: DueWords | None
              ) -> tuple[tuple[str, DueTime], str] | None:
    """((the day's due, its time), the event) of a due time said with an event, or None."""
    said = due.strip(" ,").split()
    for cut in range(1, len(said)):
        head, tail = " ".join(said[:cut]).strip(" ,"), " ".join(said[cut:]).strip(" ,")
        for day, event in ((head, tail), (tail, head)):
            if not _an_event(event, task) or not TIME_START.match(day):
                continue
            try:
                return _day_and_hour(day, now, zone, words), event
            except DueTimeError:
                continue
    return None


def _an_event(event: str, task: str) -> bool:
    """Whether ``event`` is an event of the person's day that a reminder's ``task`` (a verb's, not "the gym to …") is
    tied to."""
    return EVENT_TIME.match(event) is not None and len(event.split()) <= _EVENT_WORDS and not _NOT_A_TASK.match(task)


def _with_event(task: str, event: str) -> str:
    """The task with its event after its first clause: "pay the fees, they close at 7" + "after my shift" → "pay the
    fees after my shift, they close at 7"."""
    clause = re.search(r"\s*[,;]\s|\s+-\s", task)
    at = clause.start() if clause else len(task)
    return f"{task[:at]} {event}{task[at:]}"


# What may open or close a sentence that only gives the time: "Make it tomorrow at 9.", "At 6pm, please."
_TIME_SENTENCE_LEAD = re.compile(r"^(?:(?:make it|make that|for|say)\s+)?")
_TIME_SENTENCE_END = re.compile(rf"(?:,?\s*(?:{PLEASE_WORDS}|thanks|thank you|thx|cheers|ta))+\W*$")


def time_sentence(sentence: str) -> str:
    """The time a sentence may give, without what opens or closes it ("Make it tomorrow at 9, please." → "tomorrow at
    9")."""
    return _TIME_SENTENCE_END.sub("", _TIME_SENTENCE_LEAD.sub("", sentence)).strip(" .!")


def with_hour_said_next(action: PlainAction, own_sentence: str, said: str, now: datetime, zone: tzinfo,
                        words: DueWords | None = None) -> PlainAction:
    """"Remind me tomorrow to call mum. At 6pm.": a day said without its hour takes the hour the next sentence
    gives, when that sentence is a time and nothing else (else the day's morning, as before)."""
    due = action.arguments.get("due", "")
    day = due.removesuffix(f" at {DAY_ONLY_HOUR}")
    if day == due or re.search(rf"\b{DAY_ONLY_HOUR}\b", own_sentence):
        return action  # the hour was said with the day
    try:
        parse_due(said, now, zone, words)  # a time and nothing else
        parse_due(f"{day} {said}", now, zone, words)
    except DueTimeError:
        return action
    return PlainAction(action.skill, {**action.arguments, "due": f"{day} {said}"})


def _reminder_parts(text: str) -> list[tuple[str, str]]:
    """(task, due) candidates of "remind me …", "at 7 remind me to …" and "set a reminder … to …"."""
    match = REMIND.match(text) or SET_REMINDER.match(text)
    if match:
        return _splits(match["rest"])
    after = REMIND_AFTER.match(text)
    return [(after["task"], after["due"])] if after else []


def _first_time(due: str, every: str) -> str:
    """The first time of a repeating reminder: on its weekday; at its part of the day when no hour is given."""
    if every in WEEKDAYS and every not in due:
        due = f"on {every} {due}".strip()
    if every in DAILY_PARTS and not re.search(r"\d", due):
        due = f"{due} {'at' if every == 'night' else 'in the'} {every}".strip()
    return due


def _recurrence(every: str) -> str:
    if every in ("day", *DAILY_PARTS):
        return "daily"
    return {"weekday": "weekdays", "week": "weekly"}.get(every, f"every {every}")


_POINTER_TASK = re.compile(r"^(?:it|that|this|them|those|these|him|her|the (?:thing|same|other thing))\W*$")
_CUT_TASK = re.compile(r"\b(?:at|on|in|by|for|to|about|of|the|a|an)$")  # a time cut in two: "it at" | "5"
_TASK_LEAD = re.compile(r"(?:about|of|for|that)\s+")
_TASK_AFTER_TIME = re.compile(r"\s*:\s+|\s+(?:about|that)\s+")


def _splits(rest: str) -> list[tuple[str, str]]:
    """(task, due) candidates: "tomorrow at 9 to call X" and "to call X tomorrow at 9"."""
    # Each " to " in turn: "on wednesday at a quarter to eleven to phone the surgery" tells its time with one.
    candidates = [(rest[at.end():].strip(), rest[:at.start()].strip()) for at in re.finditer(" to ", rest)]
    if rest.startswith("to "):
        candidates.append((rest[3:].strip(), ""))  # no time left in it: a repeating one's part of the day
        words = rest[3:].split()
        # The longest time phrase at the end that parses: "call mum on friday at 6" → "on friday at 6".
        candidates += [(" ".join(words[:cut]), " ".join(words[cut:])) for cut in range(1, len(words))]
        return candidates
    # Said other ways (the planner was left them): "about the dentist friday 3pm", "on sunday at 10am that the car needs
    # petrol", "friday 3pm: dentist", "day after tomorrow 8am take pills".
    lead = _TASK_LEAD.match(rest)
    if lead:
        words = rest[lead.end():].split()
        candidates += [(" ".join(words[:cut]), " ".join(words[cut:])) for cut in range(1, len(words))]
    candidates += [(rest[at.end():].strip(), rest[:at.start()].strip()) for at in _TASK_AFTER_TIME.finditer(rest)]
    if not lead:
        words = rest.split()  # the longest time phrase first that parses, then what is left is the task
        candidates += [(" ".join(words[cut:]), " ".join(words[:cut])) for cut in range(len(words) - 1, 0, -1)]
    return candidates
