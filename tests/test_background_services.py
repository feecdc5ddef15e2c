"""Thread expiry, experience assimilation and goal pursuit, each with a controllable clock."""

from __future__ import annotations

import datetime as dt

import pytest
from rq import Queue
from sqlalchemy import select

from services.act.models import Goal
from services.db import ConversationSession
from services.memory.edits import embed_pending
from services.memory.models import Episode, MemoryChunk
from services.memory.recall import recall
from services.periodic import experience, expiry, goals
from services.queues import BACKGROUND_QUEUE, EPISODIC_QUEUE, MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE, job_owner
from services.service_call import ServiceCall
from services.streams import EventLog, user_channel
from services.threads import ACTIVE_THREADS_KEY, CURRENT_THREAD_KEY, STATE_KEY, WORKING_MEMORY_KEY
from tests.llm_steps import Json, Reply, ToolCalls
from tests.memory_builders import create_exchange, create_session, create_user

pytestmark = pytest.mark.integration

T = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def call(worker_context, name: str, at: dt.datetime = T, **options):  # type: ignore[no-untyped-def]
    return ServiceCall(name, f"{name}@{at:%H%M%S}", worker_context, clock=lambda: at, options=options)


def job_ids(real_redis, queue: str) -> list[str]:  # type: ignore[no-untyped-def]
    return Queue(queue, connection=real_redis).get_job_ids()


# --- thread expiry ------------------------------------------------------------------------------

@pytest.fixture
def idle_thread(worker_context):
    """Thread t-old (idle 7 h, one exchange without a chunk, an open session) and t-new (idle 1 h)."""
    with worker_context.sessions.begin() as session:
        conversation = create_session(session, user_id="alice", thread_id="t-old")
        enriched = create_exchange(session, thread_id="t-old", session_id=conversation.id, user_text="I love tea")
        bare = create_exchange(session, thread_id="t-old", session_id=conversation.id, user_text="and cake")
        session.add(MemoryChunk(user_id="alice", exchange_id=enriched.id, status="ok", chunk={}))
        create_session(session, user_id="alice", thread_id="t-new")
    threads = worker_context.threads
    for thread_id, idle_h in (("t-old", 7), ("t-new", 1)):
        threads.record_exchange(thread_id, "alice", {"request_id": thread_id, "user": "hi"},
                                now=(T - dt.timedelta(hours=idle_h)).timestamp())
    threads.set_current_thread("alice", "t-old")
    return conversation.id, bare.id


def test_a_stale_thread_is_flushed_to_memory_then_expired(worker_context, real_redis, idle_thread):
    session_id, bare_id = idle_thread
    result = expiry.run(call(worker_context, "thread_expiry", idle_s=6 * 3600))
    assert result.details == {"expired": 1, "busy": 0, "chunk_jobs": 1, "episodes": 1}
    assert job_ids(real_redis, MEMORY_CHUNKER_QUEUE) == [f"chunk-{bare_id}"]
    # The episode waits for that chunk: RQ queues it when the chunker job ends.
    assert job_ids(real_redis, EPISODIC_QUEUE) == []
    assert Queue(EPISODIC_QUEUE, connection=real_redis).deferred_job_registry.get_job_ids() == [f"episode-{session_id}"]
    with worker_context.sessions() as session:
        closed = session.get(ConversationSession, session_id)
        still_open = session.scalars(select(ConversationSession).where(ConversationSession.thread_id == "t-new")).one()
    assert closed.close_reason == "thread_expired" and closed.ended_at == T
    assert still_open.ended_at is None
    assert not real_redis.exists(STATE_KEY % "t-old", WORKING_MEMORY_KEY % "t-old")
    assert real_redis.exists(STATE_KEY % "t-new")
    assert real_redis.get(CURRENT_THREAD_KEY % "alice") is None  # the next message opens a new thread
    assert [m.decode() for m in real_redis.zrange(ACTIVE_THREADS_KEY, 0, -1)] == ["t-new"]
    assert expiry.run(call(worker_context, "thread_expiry", idle_s=6 * 3600)).reason == "no thread idle that long"


def test_a_thread_with_a_chat_still_pending_is_left_alone(worker_context, real_redis, idle_thread):
    real_redis.rpush("thread:pending:t-old", "request-1")
    result = expiry.run(call(worker_context, "thread_expiry", idle_s=6 * 3600))
    assert result.details["busy"] == 1 and result.details["expired"] == 0
    assert real_redis.exists(STATE_KEY % "t-old")
    assert job_ids(real_redis, EPISODIC_QUEUE) == []


# --- experience assimilation --------------------------------------------------------------------

def _act_exchange(worker_context, user: str, text: str, trail: list[dict]) -> int:  # type: ignore[type-arg]
    with worker_context.sessions.begin() as session:
        exchange = create_exchange(session, user_id=user, user_text=text, reply="Done.", mode="ACT")
        exchange.tool_trail = trail
        return exchange.id


REMINDER_SET = {"type": "action", "skill": "schedule", "ok": True,
                "arguments": {"operation": "create", "text": "dentist appointment", "due": "friday 10:00"},
                "result": {"created": {"id": 7, "text": "dentist appointment"}}}


def test_state_changing_act_results_become_one_episode_each(worker_context, real_redis):
    acted = _act_exchange(worker_context, "alice", "remind me about the dentist on friday", [REMINDER_SET])
    _act_exchange(worker_context, "alice", "what do you know about me?",
                  [{"type": "action", "skill": "recall", "ok": True, "arguments": {"query": "me"}, "result": {}}])
    result = experience.run(call(worker_context, "experience"))
    assert result.details == {"exchanges": 1, "episodes": 1}
    assert experience.run(call(worker_context, "experience")).reason == "no new ACT results"
    with worker_context.sessions() as session:
        episode = session.scalars(select(Episode)).one()
    assert episode.session_id == f"experience-{acted}" and episode.exchange_ids == [acted]
    assert "schedule" in episode.summary and "dentist appointment" in episode.summary
    # The periodic worker holds no memory graph: the chunker worker embeds the episode.
    assert episode.embedding is None and episode.model == "experience"
    assert job_ids(real_redis, MEMORY_CHUNKER_QUEUE) == [f"embed-episode-{episode.id}"]
    with worker_context.sessions.begin() as session:
        assert embed_pending(session, worker_context.embedder, "episode", episode.id) == "embedded"
    with worker_context.sessions() as session:
        hits = recall(session, worker_context.embedder, "alice", "dentist appointment reminder", k=5,
                      kinds=("episode",))
        other = recall(session, worker_context.embedder, "bob", "dentist appointment", k=5, kinds=("episode",))
    assert [hit.id for hit in hits] == [episode.id] and other == []


def test_failed_actions_are_experiences_too(worker_context):
    _act_exchange(worker_context, "alice", "add milk to the shopping list",
                  [{"type": "action", "skill": "list", "ok": False, "arguments": {"operation": "add"},
                    "error": {"code": "not_found", "message": "no list named shopping"}}])
    experience.run(call(worker_context, "experience"))
    with worker_context.sessions() as session:
        episode = session.scalars(select(Episode)).one()
    assert episode.outcome == "0 action(s) done, 1 failed" and "no list named shopping" in episode.summary


# --- goals --------------------------------------------------------------------------------------

def _goal(worker_context, user: str, text: str, **extra) -> int:  # type: ignore[no-untyped-def]
    with worker_context.sessions.begin() as session:
        create_user(session, user_id=user)
        goal = Goal(user_id=user, text=text, state=extra.pop("state", "active"), progress=extra.pop("progress", []))
        session.add(goal)
        session.flush()
        return goal.id


def test_due_goals_are_queued_one_job_each_never_on_the_prompt_queue(worker_context, real_redis):
    fresh = _goal(worker_context, "alice", "learn Spanish")
    recent = _goal(worker_context, "alice", "read more", progress=[
        {"at": (T - dt.timedelta(hours=1)).isoformat(), "kind": "pursuit", "fire_id": "x", "note": "found books"}])
    _goal(worker_context, "bob", "old plan", state="paused")
    result = goals.run(call(worker_context, "goals", min_interval_s=6 * 3600))
    assert result.details == {"active": 2, "due": 1, "queued": 1}
    assert job_ids(real_redis, BACKGROUND_QUEUE) == [f"goal-{fresh}"] and job_ids(real_redis, PROMPT_QUEUE) == []
    pursuit = Queue(BACKGROUND_QUEUE, connection=real_redis).fetch_job(f"goal-{fresh}")
    assert job_owner(pursuit.meta) == "alice"  # alice's to see and retry on the ops page
    assert goals.run(call(worker_context, "goals", min_interval_s=6 * 3600)).details["queued"] == 0  # one at a time
    later = goals.run(call(worker_context, "goals", T + dt.timedelta(hours=6), min_interval_s=6 * 3600))
    assert later.details["due"] == 2 and recent


def test_a_pursuit_acts_records_progress_and_pushes_one_goal_event(worker_context, real_redis, fake_llm):
    goal_id = _goal(worker_context, "alice", "plan the trip to Lisbon")
    fake_llm.script(ToolCalls([("memorize", {"text": "The trip to Lisbon is planned for May."})]),
                    Json({"actions": []}), Reply("I noted that the trip is in May; next, pick a hotel."))
    assert goals.pursue(worker_context, goal_id, "goals@1", now=T, wall_clock_s=60, max_iterations=4) == "pursued"
    with worker_context.sessions() as session:
        goal = session.get(Goal, goal_id)
    (note,) = goal.progress
    assert note["kind"] == "pursuit" and note["actions"] == 1 and note["ok"] == 1
    assert note["note"] == "I noted that the trip is in May; next, pick a hotel."
    tools = {tool["function"]["name"] for tool in fake_llm.requests[0]["tools"]}
    assert "memorize" in tools and not tools & {"goal", "schedule", "forget"}
    assert "plan the trip to Lisbon" in fake_llm.requests[0]["messages"][-1]["content"]
    # The same pursuit again (a retried job): no second turn, no second event.
    calls = len(fake_llm.requests)
    assert goals.pursue(worker_context, goal_id, "goals@1", now=T, wall_clock_s=60, max_iterations=4) == "resent"
    assert len(fake_llm.requests) == calls
    events = EventLog(real_redis).read_after(user_channel("alice"), None)
    assert [(e.event, e.data) for e in events] == [("goal", {
        "goal_id": goal_id, "title": "plan the trip to Lisbon", "status": "active",
        "text": "I noted that the trip is in May; next, pick a hotel."})]
    assert EventLog(real_redis).read_after(user_channel("bob"), None) == []


def test_a_goal_no_longer_active_is_skipped_and_each_goal_keeps_its_own_progress(worker_context, real_redis, fake_llm):
    first = _goal(worker_context, "alice", "first goal")
    second = _goal(worker_context, "alice", "second goal")
    fake_llm.script(Json({"actions": []}), Reply("Step one done."))
    assert goals.pursue(worker_context, second, "goals@2", now=T, wall_clock_s=60, max_iterations=2) == "pursued"
    with worker_context.sessions.begin() as session:
        session.get(Goal, first).state = "done"
    assert goals.pursue(worker_context, first, "goals@2", now=T, wall_clock_s=60, max_iterations=2) == "skipped"
    with worker_context.sessions() as session:
        assert len(session.get(Goal, second).progress) == 1 and session.get(Goal, first).progress == []
