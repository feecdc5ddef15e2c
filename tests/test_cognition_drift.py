"""Cognitive drift with a controllable clock: the gate makes no LLM call when it says no, a thought is
stored as a gist and pushed as a `thought` event only above the relevance bar."""

from __future__ import annotations

import datetime as dt

import pytest
from rq import Queue
from sqlalchemy import func, select

from services.cognition import drift
from services.cognition.models import DriftGist
from services.queues import PROMPT_QUEUE
from services.streams import user_channel
from tests.cognition_builders import Clock, activity, episode, fact, person, service_call, set_config
from tests.llm_steps import Json
from tests.sse import parse_frames

pytestmark = pytest.mark.integration

# 15:00 UTC is 16:00 in Berlin: well outside the default quiet hours (22:00–08:00).
NOW = dt.datetime(2026, 11, 23, 15, 0, tzinfo=dt.UTC)
USER = "ada"


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def ada(worker_context, clock):
    """Ada chatted two hours ago; her only memories are a month old (already nothing new)."""
    with worker_context.sessions.begin() as db:
        person(db, user_id=USER)
        activity(db, user_id=USER, at=NOW - dt.timedelta(hours=2))
        fact(db, user_id=USER, text="Ada runs in the park every Sunday", at=NOW - dt.timedelta(days=30))
        episode(db, user_id=USER, title="Training for the Berlin marathon", gist="Ada planned long runs in the park",
                at=NOW - dt.timedelta(days=30))
    return USER


def tick(context, clock, fire_id=None):
    return drift.run(service_call(context, "drift", clock, fire_id))


def thought_events(context, user_id=USER):
    return [event for event in context.events.read_after(user_channel(user_id), None) if event.event == "thought"]


def new_fact(context, text, at):
    with context.sessions.begin() as db:
        return fact(db, user_id=USER, text=text, at=at, salience=0.8)


def gists(context):
    with context.sessions.begin() as db:
        return list(db.scalars(select(DriftGist).order_by(DriftGist.id)))


def test_an_idle_system_with_nothing_to_think_about_makes_no_llm_call(worker_context, fake_llm, clock, ada):
    results = []
    for _ in range(5):
        results.append(tick(worker_context, clock))
        clock.advance(minutes=15)
    assert fake_llm.requests == []
    assert [result.outcome for result in results] == ["skipped"] * 5
    assert all(result.reason == "nothing new to think about (1)" for result in results)
    assert gists(worker_context) == [] and thought_events(worker_context) == []


def test_nobody_active_means_no_llm_call(worker_context, fake_llm, clock):
    with worker_context.sessions.begin() as db:
        person(db, user_id=USER)
        activity(db, user_id=USER, at=NOW - dt.timedelta(days=10))
        fact(db, user_id=USER, text="Ada bought new running shoes", at=NOW - dt.timedelta(hours=1))
    result = tick(worker_context, clock)
    assert (result.outcome, result.reason) == ("skipped", "nobody active in the last 72 h")
    assert fake_llm.requests == []


def test_busy_queues_mean_no_llm_call(worker_context, fake_llm, clock, ada, real_redis):
    new_fact(worker_context, "Ada bought new running shoes", NOW - dt.timedelta(hours=1))
    Queue(PROMPT_QUEUE, connection=real_redis).enqueue("workers.digest.run", "some-request")
    result = tick(worker_context, clock)
    assert result.outcome == "skipped" and result.reason.startswith("queues busy: prompt-queue: 1 queued")
    assert fake_llm.requests == []


def test_a_person_in_a_conversation_is_not_interrupted(worker_context, fake_llm, clock, ada):
    new_fact(worker_context, "Ada bought new running shoes", NOW - dt.timedelta(hours=1))
    with worker_context.sessions.begin() as db:
        activity(db, user_id=USER, at=NOW - dt.timedelta(minutes=2))
    result = tick(worker_context, clock)
    assert (result.outcome, result.reason) == ("skipped", "in a conversation (1)")
    assert fake_llm.requests == []


def test_quiet_hours_are_the_persons_local_night(worker_context, fake_llm, clock, ada):
    new_fact(worker_context, "Ada bought new running shoes", NOW - dt.timedelta(hours=1))
    clock.now = dt.datetime(2026, 11, 23, 22, 30, tzinfo=dt.UTC)  # 23:30 in Berlin
    result = tick(worker_context, clock)
    assert (result.outcome, result.reason) == ("skipped", "quiet hours (1)")
    clock.now = dt.datetime(2026, 11, 24, 6, 59, tzinfo=dt.UTC)  # 07:59 in Berlin: still quiet
    assert tick(worker_context, clock).reason == "quiet hours (1)"
    assert fake_llm.requests == []
    clock.now = dt.datetime(2026, 11, 24, 7, 0, tzinfo=dt.UTC)  # 08:00 in Berlin: awake
    fake_llm.script(Json({"thought": "How do the new shoes feel?", "topic": "running shoes", "relevance": 0.2}))
    assert tick(worker_context, clock).outcome == "ran"
    assert len(fake_llm.requests) == 1


def test_the_daily_cap_counts_the_persons_local_day(worker_context, fake_llm, clock, ada):
    set_config(worker_context, "drift", daily_cap=2, min_interval_s=0.0)
    fake_llm.route("Recent memories", Json({"thought": "A thought.", "topic": "running", "relevance": 0.1}))
    outcomes = []
    for hour in range(4):
        new_fact(worker_context, f"Ada ran {hour + 5} kilometres today", clock.now - dt.timedelta(minutes=30))
        outcomes.append(tick(worker_context, clock))
        clock.advance(hours=1)
    assert [result.outcome for result in outcomes] == ["ran", "ran", "skipped", "skipped"]
    assert outcomes[2].reason == "daily cap reached (1)"
    assert len(fake_llm.requests) == 2
    clock.now = dt.datetime(2026, 11, 24, 8, 30, tzinfo=dt.UTC)  # the next Berlin day, after quiet hours
    new_fact(worker_context, "Ada signed up for a half marathon", clock.now - dt.timedelta(hours=1))
    assert tick(worker_context, clock).outcome == "ran"
    assert len(fake_llm.requests) == 3


def test_a_thought_is_stored_and_pushed_only_above_the_bar(worker_context, fake_llm, clock, ada):
    new_fact(worker_context, "Ada bought new running shoes for the marathon", NOW - dt.timedelta(hours=1))
    fake_llm.script(Json({"thought": "Your new shoes could use a test run in the park before the marathon.",
                          "topic": "marathon shoes", "relevance": 0.9}))
    result = tick(worker_context, clock)
    assert result.outcome == "ran" and result.details["thoughts"] == 1 and result.details["pushed"] == 1
    assert len(fake_llm.requests) == 1
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert "Ada bought new running shoes for the marathon" in prompt
    assert "Training for the Berlin marathon" in prompt  # an older memory the new one brought to mind
    (gist,) = gists(worker_context)
    assert gist.text.startswith("Your new shoes") and gist.topic == "marathon shoes" and gist.relevance == 0.9
    assert "marathon" in gist.seeds and gist.associations and gist.pushed_event_id
    (event,) = thought_events(worker_context)
    assert event.data == {"id": gist.id, "text": gist.text, "topic": "marathon shoes"}
    assert thought_events(worker_context, "someone-else") == []

    # Below the bar: stored, not pushed; and the memory it thought about is not new any more.
    clock.advance(hours=3)
    new_fact(worker_context, "Ada's knee hurt after the long run", clock.now - dt.timedelta(hours=1))
    fake_llm.script(Json({"thought": "Knees and long runs.", "topic": "knee", "relevance": 0.3}))
    result = tick(worker_context, clock)
    assert result.details == {"thoughts": 1, "pushed": 0, "failed": 0}
    assert len(gists(worker_context)) == 2 and len(thought_events(worker_context)) == 1
    clock.advance(hours=2)  # 21:00 in Berlin, before the quiet hours
    assert tick(worker_context, clock).reason == "nothing new to think about (1)"
    assert len(fake_llm.requests) == 2


def test_a_rerun_of_the_same_fire_calls_no_llm_and_pushes_once(worker_context, fake_llm, clock, ada):
    new_fact(worker_context, "Ada bought new running shoes", NOW - dt.timedelta(hours=1))
    fake_llm.script(Json({"thought": "Try the shoes on a short run first.", "topic": "shoes", "relevance": 0.8}))
    first = tick(worker_context, clock, fire_id="drift-fire-1")
    again = tick(worker_context, clock, fire_id="drift-fire-1")
    assert first.details["pushed"] == 1 and again.details == {"thoughts": 1, "pushed": 0, "rerun": True}
    assert len(fake_llm.requests) == 1
    assert len(gists(worker_context)) == 1 and len(thought_events(worker_context)) == 1


def test_an_llm_failure_keeps_the_memory_new(worker_context, fake_llm, clock, ada):
    from tests.llm_steps import Error

    new_fact(worker_context, "Ada bought new running shoes", NOW - dt.timedelta(hours=1))
    fake_llm.script(Error(500))
    result = tick(worker_context, clock)
    assert result.outcome == "failed" and "500" in result.reason
    with worker_context.sessions.begin() as db:
        assert db.scalar(select(func.count()).select_from(DriftGist)) == 0
    fake_llm.script(Json({"thought": "Shoes!", "topic": "shoes", "relevance": 0.1}))
    assert tick(worker_context, clock).outcome == "ran"


def first_frame(response, event):
    """Read the open SSE stream until a frame of ``event`` arrives (the stream itself never ends)."""
    body = ""
    for chunk in response.response:
        body += chunk.decode() if isinstance(chunk, bytes) else chunk
        frames = [frame for frame in parse_frames([body]) if frame.event == event]
        if frames:
            response.close()
            return frames[0]
    raise AssertionError(f"the stream ended without a {event} event")


def test_a_pushed_thought_arrives_on_the_persons_events_stream(client, settings, worker_context, fake_llm, clock):
    me = settings.default_user
    with worker_context.sessions.begin() as db:
        person(db, user_id=me)
        activity(db, user_id=me, at=NOW - dt.timedelta(hours=2))
        fact(db, user_id=me, text="I am learning Portuguese for a trip to Lisbon", at=NOW - dt.timedelta(hours=1))
    fake_llm.script(Json({"thought": "Want a few Portuguese phrases for Lisbon?", "topic": "Lisbon trip",
                          "relevance": 0.95}))
    assert tick(worker_context, clock).details["pushed"] == 1
    frame = first_frame(client.get("/events", buffered=False), "thought")
    (gist,) = gists(worker_context)
    assert frame.data == {"id": gist.id, "text": "Want a few Portuguese phrases for Lisbon?", "topic": "Lisbon trip"}
    assert frame.id == gist.pushed_event_id
