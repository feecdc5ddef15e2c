"""What the sixteenth session's people (marguerite, dimas, oksana, reggie, fatou) lost, each in its general form: a
list named with an accented word ("a baptême list") was no list to the router, so nothing was stored and the 1.5B
later made its items up; "at 18h" (the 24-hour hour as much of the world writes it) was no time, so the reminder was
not set; "what left on my thesis list?" was no request to read the list; the question mark closing a sentence stayed
on the last item ("twine?"); "i resign from the barista job" left "works as a barista" standing; and "…, my doctor
and I agreed on it" was cut at "and I" into "…, the user's doctor" and "The user agreed on it"."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from services.act.fastpath import plain_action, said_items
from services.act.when import parse_due
from services.memory.changes import change_in
from services.memory.from_words import chunk_from_words
from services.router.mode_router import ModeRouter
from services.router.signals import RoutingContext, collect_signals
from tests.test_router_phrasings8 import routers, routes  # noqa: F401 - the module's router fixture

NOW = datetime(2030, 1, 15, 9, 0, tzinfo=UTC)
DAKAR = ZoneInfo("Africa/Dakar")


def _action(text: str):  # type: ignore[no-untyped-def]
    return plain_action(text, collect_signals(RoutingContext(text=text)), NOW, DAKAR)


@pytest.mark.parametrize("text", [
    "Can you create a baptême list with white fabric, balloons, 50 plastic plates and a photographer?",
    "can you make a fête list with candles, cake and juice",
    "create a Weihnachtsmärkte list with mulled wine, gloves and a scarf",
])
def test_a_list_named_with_an_accented_word_is_made_with_its_items(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("ACT", "list")}
    action = _action(text)
    assert action is not None and action.arguments["operation"] == "add" and len(action.arguments["items"]) >= 3


@pytest.mark.parametrize(("text", "expected"), [
    ("add candles and a cake to my fête list", {"operation": "add", "name": "fête", "items": ["candles", "cake"]}),
    ("what's on the fête list?", {"operation": "view", "name": "fête"}),
    ("show me my baptême list", {"operation": "view", "name": "baptême"}),
    ("fête list: candles, cake, juice", {"operation": "add", "name": "fête", "items": ["candles", "cake", "juice"]}),
])
def test_an_accented_list_is_filled_and_read_like_any_other(routers: list[ModeRouter], text: str,  # noqa: F811
                                                             expected: dict) -> None:
    assert routes(routers, text) == {("ACT", "list")}
    action = _action(text)
    assert action is not None and action.arguments == expected


def test_the_baptism_list_keeps_its_name_and_items_as_typed() -> None:
    action = _action("Can you create a baptême list with white fabric, balloons, 50 plastic plates and a photographer? "
                     "It is for the baptism of my niece Aïssatou.")
    assert action is not None
    assert action.arguments == {"operation": "add", "name": "baptême",
                                "items": ["white fabric", "balloons", "50 plastic plates", "photographer"]}


def test_the_mark_closing_a_sentence_is_no_part_of_its_last_item() -> None:
    assert said_items("tulip bulbs, bone meal, a new watering can and some twine? i will go on saturday.") == [
        "tulip bulbs", "bone meal", "new watering can", "twine"]
    assert said_items("a kite and sun cream! we go to the beach") == ["kite", "sun cream"]


@pytest.mark.parametrize(("spec", "expected"), [
    ("tomorrow at 18h", "2030-01-16 18:00"), ("tomorrow at 9h30", "2030-01-16 09:30"),
    ("the 4th of february at 9h30", "2030-02-04 09:30"), ("at 18h00", "2030-01-15 18:00"),
    ("friday at 7h", "2030-01-18 07:00"),
    # ... and with a dot, as Britain and much of Europe write it, or with its "h" after the minutes.
    ("tomorrow at 18.30", "2030-01-16 18:30"), ("friday at 7.15pm", "2030-01-18 19:15"),
    ("tomorrow at 6.30am", "2030-01-16 06:30"), ("tomorrow at 18:00h", "2030-01-16 18:00"),
])
def test_an_hour_written_with_h_is_that_hour_of_the_24_hour_clock(spec: str, expected: str) -> None:
    assert parse_due(spec, NOW, DAKAR).local.strftime("%Y-%m-%d %H:%M") == expected


def test_eighteen_hours_from_now_is_still_a_length_of_time() -> None:
    assert parse_due("in 18h", NOW, DAKAR).utc == datetime(2030, 1, 16, 3, 0, tzinfo=UTC)
    assert parse_due("in 1.5 hours", NOW, DAKAR).utc == datetime(2030, 1, 15, 10, 30, tzinfo=UTC)


@pytest.mark.parametrize("text", ["Remind me tomorrow at 18h to collect my boubou from the tailor",
                                  "remind me at 9h30 to call the driving school"])
def test_a_reminder_at_an_hour_written_with_h_is_set(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("ACT", "schedule")}
    action = _action(text)
    assert action is not None and action.skill == "schedule" and "h" in action.arguments["due"]
    assert parse_due(action.arguments["due"], NOW, DAKAR).local.hour in (18, 9)


def test_open_24h_is_no_time() -> None:
    signals = collect_signals(RoutingContext(text="the pharmacy near the market is open 24h now"))
    assert not signals.get("has_time")


@pytest.mark.parametrize("text", ["what left on my thesis list?", "What's still left on my thesis list",
                                  "whats remaining on the thesis list"])
def test_what_is_left_on_a_list_reads_it(text: str) -> None:
    action = _action(text)
    assert action is not None and action.arguments == {"operation": "view", "name": "thesis"}


def test_resigning_from_a_job_ends_the_facts_of_that_job_only() -> None:
    barista = "The user also work part time as barista at kopi kenangan near campus mostly evening shift"
    change = change_in("Bro update: the user resign from the barista job last week")
    assert change is not None and change.ends(barista)
    assert not change.ends("The user is in final year so thesis everyday")
    change = change_in("The user resigned from the parish council in March")
    assert change is not None and change.ends("The user sits on the parish council with Mrs Dube")
    assert not change.ends("The user sings in the church choir on Sundays")
    handed = change_in("The user handed in the user's notice at the bakery")
    assert handed is not None and handed.ends("The user works at the bakery on Elm Street")


def _facts(text: str) -> list[str]:
    return [fact["text"] if isinstance(fact, dict) else fact for fact in chunk_from_words(text)["facts"]]


def test_someone_of_the_persons_and_i_after_a_comma_is_the_next_clauses_subject() -> None:
    facts = _facts("Since last winter I do not eat meat anymore, my doctor and I agreed on it.")
    assert facts[0] == "Since last winter the user do not eat meat anymore"
    assert facts[1].startswith("The user's doctor and the user agreed on it")
    assert _facts("Speaking of special moments, my wife and I just left for our European vacation!") == [
        "The user's wife and the user just left for our European vacation"]
    # Two clauses of the person's own stay two facts.
    assert _facts("I have a dog called Rufus and I work as a nurse") == [
        "The user have a dog called Rufus", "The user work as a nurse"]


@pytest.mark.parametrize("text", [
    "write a short polite whatsapp to my thesis supervisor asking for meeting next week, use his name pls",
    "Draft an email to my landlord about the boiler, and use her first name",
])
def test_a_writing_request_whose_pronoun_stands_for_someone_it_names_is_answered(
        routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """Sent to CLARIFY, the first was answered "Which one do you mean?" and no message was written."""
    assert routes(routers, text) == {("RESPOND", None)}


@pytest.mark.parametrize("text", ["use his name pls", "add her list of must-have shots to mine"])
def test_a_pronoun_for_nobody_named_still_needs_asking(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    assert routes(routers, text) == {("CLARIFY", None)}


@pytest.mark.parametrize("text", [
    "My cousins come to eat at my place on Saturday, propose me one dish I can cook for them",
    "we have guests tonight. propose us a dessert without nuts",
])
def test_a_learners_propose_me_asks_for_a_suggestion(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """Read as news (ACKNOWLEDGE), the first was answered "What kind of dishes do you like?"."""
    assert routes(routers, text) == {("RESPOND", None)}


@pytest.mark.parametrize("text", ["You had to remind me something about 18h, what was it?",
                                  "You were supposed to remind me of something on Friday morning. What was it?"])
def test_a_reminder_set_before_asked_about_reads_the_reminders(routers: list[ModeRouter], text: str) -> None:  # noqa: F811
    """Read as a reminder to set with nothing to remind of, the first went to CLARIFY, whose guard answers "what
    exactly?" to someone asking what it was."""
    assert routes(routers, text) == {("ACT", "schedule")}
    action = _action(text)
    assert action is not None and action.arguments == {"operation": "list"}
