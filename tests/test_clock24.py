"""A person who asked for the 24-hour clock gets every clock time of a reply on it.

Told "always give me times in 24 hour format" (and the same again just before the message), the 1.5B still
answered "Your agent pickup is at 4:20 PM": the reply is rewritten, as it streams, for that person only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

import pytest

from services.llm.clock import settled, to_24_hour
from services.llm.guard import ScaffoldGuard
from services.memory.answer_form import clock_wanted, wants_24_hour
from services.queues import MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from tests.llm_steps import Reply
from tests.test_act_chat import chat, message_of, person  # noqa: F401  (person: a fixture)


@pytest.mark.parametrize(("said", "clock"), [
    ("Your agent pickup is at 4:20 PM.", "Your agent pickup is at 16:20."),
    ("Pickup at 4:20pm, gate 3", "Pickup at 16:20, gate 3"),
    ("Pickup at 4.20 p.m. sharp", "Pickup at 16:20 sharp"),
    ("It lands at 4.20 p.m. Then you go.", "It lands at 16:20. Then you go."),
    ("Be there by 4 PM or 4pm at the latest.", "Be there by 16:00 or 16:00 at the latest."),
    ("The train is at 12:30 AM.", "The train is at 00:30."),
    ("Lunch at 12 noon, or 12 PM.", "Lunch at 12:00, or 12:00."),
    ("Doors close at 12 midnight.", "Doors close at 00:00."),
    ("Wake up at 9:10 AM.", "Wake up at 09:10."),
    ("Come at 7 in the morning or 4 o'clock in the afternoon.", "Come at 07:00 or 16:00."),
    ("The shop is open 4-5 pm.", "The shop is open 16:00–17:00."),
    ("Office hours are 9am-5pm, from 11 to 1 pm, between 4 and 5 p.m. too.",
     "Office hours are 09:00–17:00, from 11:00 to 13:00, between 16:00 and 17:00 too."),
    ("Come at 4 pm-ish.", "Come at 16:00-ish."),  # the time is one; the "-ish" stays with it
    # The 1.5B gave both in two tries of three: said once.
    ("Pickup is at 4.20 in the afternoon (16:20).", "Pickup is at 16:20."),
    ("Pickup is at 16:20 (4:20 PM).", "Pickup is at 16:20."),
    ("Pickup is at 4:20 PM (17:20).", "Pickup is at 16:20 (17:20)."),
])
def test_a_clock_time_with_its_half_of_the_day_is_written_on_the_24_hour_clock(said: str, clock: str) -> None:
    assert to_24_hour(said) == clock


@pytest.mark.parametrize("said", [
    "The PM said so at the press conference.",  # a prime minister
    "Take 3.5 am I right?",  # no time: one digit after the point
    "See you at 4, then.",  # no half of the day: left as it is
    "It leaves at 16:20 and lands at 18:05.",  # already 24-hour
    "In 2024 pm was a word.",
    "Buy 4 amps and 13:00 PM is no time at all.",
    "I was 9:75 am once.",
])
def test_what_is_not_a_12_hour_clock_time_is_left_as_it_is(said: str) -> None:
    assert to_24_hour(said) == said


def test_a_streamed_reply_settles_to_the_same_text_and_never_shows_the_12_hour_time() -> None:
    text = ("Pickup is at 4:20 PM. Office 9am-5pm, between 4 and 5 p.m. Then lunch at 12 noon, tea at 4.20 in the "
            "afternoon (16:20) or 16:30 (4:30 pm).")
    sent = ""
    for end in range(len(text) + 1):
        now = settled(text[:end])
        assert now.startswith(sent) and "4:20" not in now and "9am" not in now and "(" not in now
        sent = now
    assert to_24_hour(text) == ("Pickup is at 16:20. Office 09:00–17:00, between 16:00 and 17:00. Then lunch at "
                                "12:00, tea at 16:20 or 16:30.") == sent


@pytest.mark.parametrize(("fact", "wanted"), [
    ("One thing please, always give me times in 24 hour format. On ship everything is 24 hour, am and pm is "
     "confusing me.", True),
    ("One thing please, always give you times in 24 hour format.", True),
    ("The user wants times in 24h", True),
    ("The user prefers the twenty-four hour clock", True),
    ("Military time please", True),
    ("No am/pm for the user please", True),
    ("am and pm confuse the user", True),
    ("The shop is open 24 hours", False),
    ("The user works 24 hour shifts", False),
    ("The user doesn't like the 24 hour clock", False),
    ("The user prefers the 12 hour clock", False),
])
def test_a_fact_asking_for_the_24_hour_clock_is_told_from_one_that_does_not(fact: str, wanted: bool) -> None:
    assert wants_24_hour(fact) is wanted


@dataclass
class Said:
    text: str
    at: dt.datetime | None


def test_the_newest_fact_about_the_clock_decides() -> None:
    day = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    asked = Said("The user wants times in 24 hour format", day)
    later = Said("12 hour times are fine for the user now", day + dt.timedelta(days=3))
    other = Said("The user lives on a ship", day + dt.timedelta(days=5))
    assert clock_wanted([asked, other]) and not clock_wanted([asked, later, other]) and not clock_wanted([other])


def test_the_guard_fed_small_chunks_sends_16_20_and_never_4_20() -> None:
    reply = "Your agent pickup is at 4:20 PM. Have a safe flight!"
    for size in (1, 2, 3, 5):
        sent: list[str] = []
        guard = ScaffoldGuard(sent.append, message="What time is pickup?", clock24=True)
        for start in range(0, len(reply), size):
            guard(reply[start:start + size])
            assert "4:20" not in "".join(sent)
        final = guard.finish(reply)
        assert final == "".join(sent) == "Your agent pickup is at 16:20. Have a safe flight!" and not guard.rewritten
    untouched: list[str] = []
    guard = ScaffoldGuard(untouched.append, message="What time is pickup?")
    for start in range(0, len(reply), 3):
        guard(reply[start:start + 3])
    assert guard.finish(reply) == "".join(untouched) == reply  # nobody asked: as the model wrote it


@pytest.fixture
def settings(settings):  # type: ignore[no-untyped-def]
    return replace(settings, llm_profile="compact")


@pytest.mark.integration
@pytest.mark.usefixtures("person")
def test_the_scripted_4_20_pm_reaches_the_person_as_16_20_once_they_asked_and_unchanged_before(
        client, run_jobs, fake_llm) -> None:
    """Through POST /chat under the small-model profile: the scripted model's "4:20 PM" reaches the person as it
    was written until they ask for the 24-hour clock, and as "16:20" after (never "4:20" in a delta)."""
    question = "My flight lands at 3.20 in the afternoon and pickup is one hour after landing. What time is pickup?"

    def ask() -> tuple[str, str]:
        fake_llm.script_stream(Reply("Pickup is at 4:20 PM."))
        frames, _ = chat(client, run_jobs, question)
        deltas = "".join(frame.data["text"] for frame in frames if frame.event == "delta")
        return message_of(frames)["text"], deltas

    assert ask() == ("Pickup is at 4:20 PM.", "Pickup is at 4:20 PM.")  # never said: as the model wrote it
    fake_llm.script_stream(Reply("Noted!"))
    chat(client, run_jobs, "One thing please, always give me times in 24 hour format. On ship everything is 24 "
                           "hour, am and pm is confusing me.")
    run_jobs((MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE))
    text, deltas = ask()  # in the same thread: the block about the person is as it was, the wish is not
    assert text == "Pickup is at 16:20." and "4:20" not in deltas
