"""Due times as people say them, beyond the digits: a part of the day said before its hour ("tonight at 10" was
10:00 in the morning, "this evening at 8" no time at all) and a length said in words ("in two hours"). The fast path
sets what parses here without asking the planner model."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from services.act.fastpath import plain_action
from services.act.when import parse_due
from services.router.signals import RoutingContext, collect_signals

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)  # a Tuesday morning
LONDON = ZoneInfo("Europe/London")


@pytest.mark.parametrize(("spec", "expected"), [
    ("tonight at 10", "2030-01-15 22:00"), ("tonight at 9:30", "2030-01-15 21:30"),
    ("this evening at 8", "2030-01-15 20:00"), ("this afternoon at 3", "2030-01-15 15:00"),
    ("tomorrow evening at 7", "2030-01-16 19:00"), ("tomorrow night at 11", "2030-01-16 23:00"),
    ("friday morning 7:30", "2030-01-18 07:30"), ("monday evening at 6 o'clock", "2030-01-21 18:00"),
    # said after the hour, as before
    ("at 10 tonight", "2030-01-15 22:00"), ("at 6:30 in the evening", "2030-01-15 18:30"),
    ("tonight at 10pm", "2030-01-15 22:00"), ("tomorrow night at 2", "2030-01-16 02:00"),
])
def test_a_part_of_the_day_said_before_the_hour_is_its_half_of_the_day(spec: str, expected: str) -> None:
    assert parse_due(spec, NOW, LONDON).local.strftime("%Y-%m-%d %H:%M") == expected


@pytest.mark.parametrize(("spec", "minutes"), [
    ("in two hours", 120), ("in twenty minutes", 20), ("in a couple of hours", 120), ("in three days", 3 * 1440),
    ("in forty-five minutes", 45), ("in 2 hours", 120), ("in half an hour", 30), ("in an hour", 60),
])
def test_a_length_said_in_words_is_that_long_from_now(spec: str, minutes: int) -> None:
    assert (parse_due(spec, NOW, LONDON).utc - NOW).total_seconds() == minutes * 60


@pytest.mark.parametrize(("text", "due"), [
    ("Can you remind me in two hours to check the oven?", "2030-01-15 11:00"),
    ("remind me tonight at 10 to lock the shed", "2030-01-15 22:00"),
    ("Remind me tomorrow evening at 7 to put the bins out", "2030-01-16 19:00"),
])
def test_such_a_reminder_is_set_for_that_time_without_the_planner(text: str, due: str) -> None:
    action = plain_action(text, collect_signals(RoutingContext(text=text)), NOW, LONDON)
    assert action is not None and action.skill == "schedule"
    assert parse_due(action.arguments["due"], NOW, LONDON).local.strftime("%Y-%m-%d %H:%M") == due


@pytest.mark.parametrize(("text", "task", "due"), [
    ("remind me day after tomorrow 8am take pills", "take pills", "2030-01-17 08:00"),
    ("please remind me about the dentist friday 3pm", "the dentist", "2030-01-18 15:00"),
    ("remind me friday 3pm: dentist", "dentist", "2030-01-18 15:00"),
    ("Remind me on Sunday at 10am that the car needs petrol", "the car needs petrol", "2030-01-20 10:00"),
    ("can u remind me 2moro at 7 to walk the dog", "walk the dog", "2030-01-16 07:00"),
    ("remind me at 9 tomorrow morning to call the school", "call the school", "2030-01-16 09:00"),
])
def test_a_reminder_said_without_to_or_with_its_time_first_is_set_as_said(text: str, task: str, due: str) -> None:
    """The planner model was left these; the 1.5B set a day off or asked to confirm another hour."""
    action = plain_action(text, collect_signals(RoutingContext(text=text)), NOW, LONDON)
    assert action is not None and action.arguments["text"] == task
    assert parse_due(action.arguments["due"], NOW, LONDON).local.strftime("%Y-%m-%d %H:%M") == due


@pytest.mark.parametrize("text", ["remind me about it at 5", "Remind me of that tomorrow morning"])
def test_a_reminder_of_something_said_before_is_left_to_the_conversation(text: str) -> None:
    assert plain_action(text, collect_signals(RoutingContext(text=text)), NOW, LONDON) is None
