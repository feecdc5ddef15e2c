"""Pure parts of ACT: due times, recurrence, config, argument validation, dispatcher, critic, compaction."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from services.act.compaction import Budget, PromptState, stage_one, stage_two
from services.act.config import (
    ActConfig,
    AssociateConfig,
    CompactionConfig,
    CriticConfig,
    SkillLimits,
    load_act_config,
)
from services.act.critic import Critic
from services.act.dispatcher import ActDispatcher, validate
from services.act.recurrence import RecurrenceError, next_occurrence, normalize_rule
from services.act.skills.base import SessionGate, Skill, SkillContext, SkillError
from services.act.turn import INNATE_SKILLS, innate_dispatcher
from services.act.when import DueTimeError, parse_due
from services.memory.concepts import ConceptGraph, spread
from services.settings import PROJECT_ROOT, SettingsError
from services.text import reply_kind

BERLIN = ZoneInfo("Europe/Berlin")
NOW = dt.datetime(2026, 11, 21, 15, 30, tzinfo=dt.UTC)  # Saturday 16:30 in Berlin
SKILLS = {skill.name: skill for skill in INNATE_SKILLS}


# --- due times ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("spec", "local"), [
    ("tomorrow at 9", "2026-11-22T09:00"),
    ("Tomorrow 9am", "2026-11-22T09:00"),
    ("tonight", "2026-11-21T21:00"),
    ("at 17:30", "2026-11-21T17:30"),
    ("9:00", "2026-11-22T09:00"),  # already past today: the next 9:00
    ("in 2 hours", "2026-11-21T18:30"),
    ("+15m", "2026-11-21T16:45"),
    ("monday 8:30am", "2026-11-23T08:30"),
    ("next saturday at noon", "2026-11-28T12:00"),
    ("saturday 8pm", "2026-11-21T20:00"),
    ("2026-11-22T09:00", "2026-11-22T09:00"),
    ("2026-11-22T09:00Z", "2026-11-22T10:00"),
    ("2026-11-22 at 7pm", "2026-11-22T19:00"),
    ("day after tomorrow in the morning", "2026-11-23T09:00"),
    # Calendar dates, the next time they come (NOW is Saturday 21 November 2026).
    ("on the 14th at 10am", "2026-12-14T10:00"),
    ("the 21st at 18:00", "2026-11-21T18:00"),  # still ahead today
    ("the 21st at 9", "2026-12-21T09:00"),  # already past today: next month's
    ("14 december at 10am", "2026-12-14T10:00"),
    ("december 14th at 10", "2026-12-14T10:00"),
    ("the 3rd of march at 9", "2027-03-03T09:00"),
    ("sept 3 at 9:30pm", "2027-09-03T21:30"),
    ("the 31st at 9", "2026-12-31T09:00"),  # November has no 31st
    # An hour in words, as a person writes it to a reminder.
    ("on monday at ten o'clock", "2026-11-23T10:00"),
    ("tomorrow at seven pm", "2026-11-22T19:00"),
    ("saturday at eleven", "2026-11-28T11:00"),  # 11:00 today is past
    # A clock time as said (the planner model was left to guess "tomorrow at half past nine" and set 15:30).
    ("tomorrow at half past nine", "2026-11-22T09:30"),
    ("tomorrow at half nine", "2026-11-22T09:30"),  # half past nine, as said in Britain
    ("monday at quarter to ten", "2026-11-23T09:45"),
    ("monday at a quarter past 7 pm", "2026-11-23T19:15"),
    ("tomorrow at twenty past ten", "2026-11-22T10:20"),
    ("tomorrow at ten to one", "2026-11-22T12:50"),
    ("tomorrow at twenty-five to 8", "2026-11-22T07:35"),
    ("in half an hour", "2026-11-21T17:00"),  # not "half" a clock time
    # The half of the day said after the clock ("…at half past six in the evening" could not be read, and a reminder
    # asked for "tuesday at half past six in the evening" went to the planner); chat's "thurs", "weds" and "@".
    ("the tuesday at half past six in the evening", "2026-11-24T18:30"),
    ("wednesday at 10:45 in the morning", "2026-11-25T10:45"),
    ("at 6 tonight", "2026-11-21T18:00"),  # not 6 a.m., which had already passed
    ("at 2 at night", "2026-11-22T02:00"),
    ("at 12 at night", "2026-11-22T00:00"),  # midnight, not noon
    ("thurs @ 3", "2026-11-26T15:00"),
    ("weds at 4pm", "2026-11-25T16:00"),
    # A bare hour up to 6 is the afternoon: "tomorrow at 3" had set 03:00; from 7 it is the morning's.
    ("tomorrow at 3", "2026-11-22T15:00"),
    ("tomorrow at 5:30", "2026-11-22T17:30"),
    ("tomorrow at 03:00", "2026-11-22T03:00"),
    ("monday at 7", "2026-11-23T07:00"),
])
def test_due_times_resolve_in_the_persons_zone(spec, local):
    due = parse_due(spec, NOW, BERLIN)
    assert due.local.strftime("%Y-%m-%dT%H:%M") == local
    assert due.utc.tzinfo == dt.UTC and due.utc == due.local


@pytest.mark.parametrize(("spec", "code"), [
    ("tomorrow", "missing_time"), ("", "missing_time"), ("yesterday at 9", "invalid"), ("13pm", "invalid"),
    ("at 25", "invalid"), ("2026-02-30T09:00", "invalid"), ("2020-01-01T09:00", "past"), ("soonish", "invalid"),
    ("on the 14th", "missing_time"), ("30 february at 9", "invalid"), ("the 32nd at 9", "invalid"),
    ("ten or nine", "invalid"), ("half 17", "invalid"),  # (words that are no clock time stay unread)
])
def test_bad_due_times(spec, code):
    with pytest.raises(DueTimeError) as caught:
        parse_due(spec, NOW, BERLIN)
    assert caught.value.code == code


def test_same_words_different_zones_different_instants():
    tokyo = parse_due("tomorrow at 9", NOW, ZoneInfo("Asia/Tokyo")).utc
    new_york = parse_due("tomorrow at 9", NOW, ZoneInfo("America/New_York")).utc
    # 15:30 UTC is already Sunday 00:30 in Tokyo, so its "tomorrow" is Monday.
    assert tokyo == dt.datetime(2026, 11, 23, 0, 0, tzinfo=dt.UTC)
    assert new_york == dt.datetime(2026, 11, 22, 14, 0, tzinfo=dt.UTC)


def test_a_time_inside_a_dst_gap_moves_forward():
    due = parse_due("2027-03-28T02:30", NOW, BERLIN)  # clocks jump 02:00 → 03:00 that night
    assert due.local.strftime("%H:%M %Z") == "03:30 CEST"


# --- recurrence -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "rule"), [
    ("daily", "FREQ=DAILY"), ("Every weekday", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
    ("every monday and thursday", "FREQ=WEEKLY;BYDAY=MO,TH"), ("every 2 hours", "FREQ=HOURLY;INTERVAL=2"),
    ("RRULE:FREQ=MONTHLY;BYMONTHDAY=1,15", "FREQ=MONTHLY;BYMONTHDAY=1,15"),
    ("freq=weekly;interval=2;byday=fr", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR"),
    ("0 9 * * 1-5", "CRON:0 9 * * 1-5"), ("cron:*/30 8-18 * * *", "CRON:*/30 8-18 * * *"),
])
def test_rules_are_normalised(text, rule):
    assert normalize_rule(text) == rule


@pytest.mark.parametrize("text", ["sometimes", "FREQ=SECONDLY", "every funday", "0 25 * * *", "FREQ=DAILY;COUNT=3",
                                  "FREQ=DAILY;INTERVAL=0", "1 2 3"])
def test_bad_rules(text):
    with pytest.raises(RecurrenceError):
        normalize_rule(text)


def test_daily_keeps_the_wall_clock_across_dst():
    anchor = dt.datetime(2026, 3, 28, 9, 0, tzinfo=BERLIN)
    following = next_occurrence("FREQ=DAILY", anchor, anchor, BERLIN)
    assert following == dt.datetime(2026, 3, 29, 9, 0, tzinfo=BERLIN)
    assert following.utcoffset() == dt.timedelta(hours=2)


def test_next_occurrences():
    friday = dt.datetime(2026, 11, 20, 9, 0, tzinfo=BERLIN)
    assert next_occurrence("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", friday, friday, BERLIN).day == 23
    assert next_occurrence("CRON:0 9 * * 1-5", friday, friday, BERLIN).day == 23
    assert next_occurrence("FREQ=MONTHLY;BYMONTHDAY=31", friday, friday, BERLIN).date() == dt.date(2026, 12, 31)
    assert next_occurrence("FREQ=DAILY;UNTIL=20261121T000000Z", friday, friday, BERLIN) is None
    late = dt.datetime(2028, 1, 1, tzinfo=dt.UTC)  # far after the anchor: still aligned to every other day
    assert (next_occurrence("FREQ=DAILY;INTERVAL=2", friday, late, BERLIN).date() - friday.date()).days % 2 == 0


# --- config -----------------------------------------------------------------------------------------

def test_the_shipped_config_loads():
    config = load_act_config(PROJECT_ROOT / "configs")
    assert config.loop.max_iterations >= 1 and config.loop.action_cost(2) > config.loop.action_cost(0)


def test_missing_config_file_means_defaults(tmp_path: Path):
    assert load_act_config(tmp_path) == ActConfig()


@pytest.mark.parametrize("content", [
    '[loop]\nmax_iterations = "6"', "[loop]\nmax_iteration = 6", "[looop]", "[loop]\nnative_tools = 1",
    "[associate]\ndecay = 1.5", "[compaction]\nthreshold = 0", "[skills]\nrecall_default_k = 30",
    "[skills]\nrecall_default_k = 0",
])
def test_bad_config_is_refused(content, tmp_path: Path):
    (tmp_path / "act.toml").write_text(content + "\n")
    with pytest.raises(SettingsError):
        load_act_config(tmp_path)


# --- validation and dispatch -------------------------------------------------------------------------

def test_validate_reports_every_problem():
    schema = SKILLS["list"].parameters
    assert validate(schema, {"operation": "add", "name": "x", "items": ["a"]}) == []
    problems = validate(schema, {"operation": "fly", "name": 3, "items": ["", 5], "extra": True})
    assert len(problems) == 5
    assert validate({"type": "integer"}, True) == ["arguments must be integer, got bool"]


def _context(**overrides):
    values = dict(user_id="u", thread_id="t", request_id="r", user_text="", zone=BERLIN, zone_name="Europe/Berlin",
                  now=NOW, config=ActConfig(), gate=SessionGate(None))
    return SkillContext(**{**values, **overrides})


def _skill(name, handler):
    return Skill(name, name, {"type": "object", "properties": {}}, handler)


def _crash(ctx, args):
    raise KeyError("secret internals")


def _refuse(ctx, args):
    raise SkillError("not_found", "no such thing", hint="try another")


def _hang(ctx, args):
    """Runs until it is abandoned (at most a minute): it times out however fast or slow the machine is."""
    until = time.monotonic() + 60
    while not ctx.ticket.cancelled and time.monotonic() < until:
        time.sleep(0.01)
    return {}


def test_dispatcher_turns_every_failure_into_a_result():
    # Only the hanging skill has a short deadline: under load a 0.2 s one for all timed out the others too.
    skills = [_skill("crash", _crash), _skill("refuse", _refuse), _skill("odd", lambda c, a: [1]),
              _skill("db", lambda ctx, a: {"s": str(ctx.session)})]
    dispatcher = ActDispatcher(skills, timeout_s=60)
    crash = dispatcher.dispatch("crash", {}, _context())
    assert crash.error["code"] == "internal" and "secret" not in str(crash.error) and "Traceback" not in str(crash)
    assert dispatcher.dispatch("refuse", {}, _context()).error == {"code": "not_found", "message": "no such thing",
                                                                    "hint": "try another"}
    assert dispatcher.dispatch("odd", {}, _context()).error["code"] == "internal"
    hung = ActDispatcher([_skill("hang", _hang)], timeout_s=0.2).dispatch("hang", {}, _context())
    assert hung.error["code"] == "timeout"
    assert dispatcher.dispatch("db", {}, _context()).error["code"] == "unavailable"
    assert dispatcher.dispatch("nope", {}, _context()).error["code"] == "unknown_skill"
    assert dispatcher.dispatch("crash", {}, _context(), arguments_error="bad JSON").error["code"] == \
        "invalid_arguments"


def test_tools_carry_no_argument_descriptions_but_the_catalogue_does():
    tool = SKILLS["schedule"].tool()
    assert tool["function"]["name"] == "schedule"
    assert "description" not in tool["function"]["parameters"]["properties"]["due"]
    assert "description" in SKILLS["schedule"].parameters["properties"]["due"]


def test_recall_takes_its_limits_from_the_config():
    config = ActConfig(skills=SkillLimits(recall_default_k=3, recall_max_k=7))
    skill = innate_dispatcher(config).skills["recall"]
    k = skill.parameters["properties"]["k"]
    assert k["maximum"] == 7 and "default 3" in k["description"]
    assert validate(skill.parameters, {"query": "x", "k": 8}) == ["arguments.k must be <= 7"]
    assert SKILLS["recall"].parameters["properties"]["k"]["maximum"] == SkillLimits().recall_max_k


# --- critic -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind"), [
    ("yes", "confirm"), ("Yes please", "confirm"), ("do it", "confirm"), ("ok", "confirm"), ("go ahead!", "confirm"),
    ("no", "cancel"), ("nope", "cancel"), ("don't", "cancel"), ("cancel that", "cancel"), ("never mind", "cancel"),
    ("what's the weather", None), ("not sure", None),
])
def test_reply_kind(text, kind):
    assert reply_kind(text) == kind


def _assess(name, arguments, said):
    return Critic(CriticConfig(confirm_below=0.7)).assess(SKILLS[name], arguments, said, NOW, BERLIN)


def test_grounded_consequential_actions_run():
    assert _assess("list", {"operation": "add", "name": "shopping", "items": ["milk"]},
                   "Add milk to my shopping list").run
    assert _assess("schedule", {"operation": "create", "text": "call the dentist", "due": "tomorrow at 9"},
                   "Remind me tomorrow at 9 to call the dentist").run
    assert _assess("list", {"operation": "delete", "name": "shopping"}, "please delete my shopping list").run
    assert _assess("recall", {"query": "anything"}, "").run  # safe skills are never held back


def test_doubtful_consequential_actions_wait_for_confirmation():
    invented = _assess("list", {"operation": "add", "name": "shopping", "items": ["caviar", "champagne"]},
                       "Add milk to my shopping list")
    unasked_delete = _assess("list", {"operation": "delete", "name": "shopping"}, "my shopping list is long")
    wrong_hour = _assess("schedule", {"operation": "create", "text": "call the dentist", "due": "tomorrow at 10"},
                         "Remind me tomorrow at 9 to call the dentist")
    forget = _assess("forget", {"query": "my address"}, "forget my address")
    for verdict in (invented, unasked_delete, wrong_hour, forget):
        assert not verdict.run and verdict.reasons
    assert forget.confidence == 0.0


def test_safe_skills_are_corrected_silently():
    critic = Critic(CriticConfig())
    fixed, notes = critic.correct(SKILLS["recall"], {"query": " ", "k": 50, "mood": "x"}, "where did I park")
    assert fixed == {"query": "where did I park", "k": 20} and len(notes) == 3
    unchanged, none = critic.correct(SKILLS["list"], {"operation": "add", "colour": "red"}, "")
    assert unchanged == {"operation": "add", "colour": "red"} and none == []
    retry = critic.retry_arguments("recall", {"query": "what did I say about the dentist"}, True, {"items": []})
    assert retry == {"query": "dentist"}


# --- associate and compaction -----------------------------------------------------------------------

def test_spreading_activation_decays_and_excludes_the_seed():
    graph = ConceptGraph()
    graph.add("fact:1", "coffee morning ritual")
    graph.add("fact:2", "ritual meditation")
    graph.add("fact:3", "meditation retreat mountains")
    reached = spread(graph, ["coffee"], AssociateConfig(decay=0.5, threshold=0.02, max_hops=3), 3)
    assert "coffee" not in reached
    assert reached["ritual"] > reached["meditation"] > reached.get("retreat", 0.0)
    strict = spread(graph, ["coffee"], AssociateConfig(decay=0.5, threshold=0.2, max_hops=3), 3)
    assert set(strict) == {"morning", "ritual"}


def test_stage_one_and_two_shrink_the_prompt_state():
    state = PromptState(history="User: hi\nEngram: hello", view=[
        {"type": "action", "skill": "recall", "arguments": {"query": "x"}, "ok": True,
         "result": {"items": ["y" * 900]}},
        {"type": "action", "skill": "list", "arguments": {}, "ok": False, "error": {"code": "needs_info"}},
    ])
    audit = stage_one(state, iteration=2)
    assert audit["replaced"] == 2 and len(state.view) == 1 and "y" * 200 not in state.view[0]["summary"]
    audit = stage_two(state, iteration=3, restart=1, user_text="find x", max_chars=300)
    assert audit["checkpoint"].startswith("The person asked: find x") and len(state.current_state) <= 300
    assert "summarised under Current state" in state.history and state.view[0]["stage"] == 2


def test_budget_counts_tools_and_leaves_room_for_the_reply():
    budget = Budget(CompactionConfig(context_window=1000, threshold=0.5, chars_per_token=4.0), 4096, 200,
                    fixed_chars=400)
    assert (budget.limit, budget.trigger) == (800, 400)
    assert budget.tokens([{"content": "x" * 400}]) == 201
    assert not budget.over([{"content": "x" * 1100}]) and budget.over([{"content": "x" * 1300}])


@pytest.mark.integration
def test_after_commit_waits_for_the_outer_commit_not_a_savepoint(db_engine):
    from sqlalchemy import text as sql
    from sqlalchemy.orm import Session

    from services.act.transaction import after_commit

    calls: list[str] = []
    with Session(db_engine) as session:
        session.begin()
        after_commit(session, lambda: calls.append("committed"))
        with session.begin_nested():  # a skill's savepoint
            session.execute(sql("SELECT 1"))
        assert calls == []
        session.commit()
    assert calls == ["committed"]
    with Session(db_engine) as session:
        session.begin()
        after_commit(session, lambda: calls.append("rolled back"))
        with session.begin_nested():
            session.execute(sql("SELECT 1"))
        session.rollback()
    assert calls == ["committed"]
