"""Episodic memory: waits for chunks with backoff, proceeds after the deadline, falls back on bad
output, and (end to end) turns a real conversation through POST /chat into an episode."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
from rq import Queue
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from services.db import ConversationSession, Exchange
from services.memory.config import EpisodicConfig, MemoryConfig
from services.memory.models import Episode, Fact, MemoryChunk
from services.queues import EPISODIC_QUEUE, MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE, enqueue, job_owner
from tests.fake_embedder import HashEmbedder
from tests.llm_steps import Garbage, Json, Reply
from tests.memory_builders import create_exchange, create_session

pytestmark = pytest.mark.integration

EPISODE = {
    "title": "Planning the Lisbon move", "gist": "The user planned their move to Lisbon.",
    "summary": "The user is moving to Lisbon in May and asked about neighbourhoods.", "intent": "plan the move",
    "emotion": "excited", "outcome": "chose Alfama", "salience": 0.8, "open_loops": ["book movers"],
}
CHUNK = {"gists": ["The user talked about moving to Lisbon."], "facts": [
    {"text": "The user is moving to Lisbon in May.", "speaker": "user", "confidence": 0.9}],
    "entities": [{"name": "Lisbon", "type": "place"}], "emotion": "excited", "salience": 0.6, "open_loops": []}


@pytest.fixture
def episodic(worker_context):
    worker_context.embedder = HashEmbedder()
    from workers import episodic_memory

    return episodic_memory


def _session_with_exchanges(db_engine, ended_ago_s: float, chunked: int = 1) -> tuple[str, list[int]]:
    ended = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=ended_ago_s)
    with Session(db_engine) as session, session.begin():
        conversation = create_session(session, topic="moving", ended_at=ended)
        ids = [create_exchange(session, thread_id=conversation.thread_id, session_id=conversation.id,
                               user_text=f"Moving to Lisbon, step {n}", reply="Noted.").id for n in range(2)]
        for exchange_id in ids[:chunked]:
            session.add(MemoryChunk(user_id="alice", exchange_id=exchange_id, session_id=conversation.id,
                                    status="ok", chunk=CHUNK, salience=0.6))
        return conversation.id, ids


def test_waits_for_missing_chunks_with_backoff(episodic, db_engine, real_redis, fake_llm):
    session_id, _ = _session_with_exchanges(db_engine, ended_ago_s=1)
    assert episodic.run(session_id) == "waiting"
    registry = Queue(EPISODIC_QUEUE, connection=real_redis).scheduled_job_registry
    assert registry.get_job_ids() == [f"episode-{session_id}-retry1"]
    later = Queue(EPISODIC_QUEUE, connection=real_redis).fetch_job(f"episode-{session_id}-retry1")
    assert job_owner(later.meta) == "alice"
    assert fake_llm.requests == []  # no LLM call while waiting
    with Session(db_engine) as session:
        assert session.scalars(select(Episode)).all() == []


def test_proceeds_with_what_exists_after_the_deadline(episodic, worker_context, db_engine, fake_llm):
    worker_context.extras["memory_config"] = MemoryConfig(episodic=EpisodicConfig(deadline_s=60))
    session_id, ids = _session_with_exchanges(db_engine, ended_ago_s=3600)
    fake_llm.route("EPISODE", Json(EPISODE))
    assert episodic.run(session_id, 1, first_seen=time.time() - 120) == "stored"
    assert episodic.run(session_id) == "exists"
    with Session(db_engine) as session:
        episode = session.scalars(select(Episode)).one()
    assert episode.title == "Planning the Lisbon move" and episode.salience == 0.8
    assert episode.exchange_ids == ids and episode.open_loops == ["book movers"]
    assert episode.embedding is not None and episode.started_at <= episode.ended_at
    assert "Moving to Lisbon, step 1" in fake_llm.requests[0]["messages"][0]["content"]


def test_unusable_llm_output_still_makes_an_episode_from_the_chunks(episodic, db_engine, fake_llm, real_redis):
    session_id, _ = _session_with_exchanges(db_engine, ended_ago_s=10, chunked=2)
    fake_llm.route("EPISODE", Garbage())
    assert episodic.run(session_id) == "stored"
    with Session(db_engine) as session:
        episode = session.scalars(select(Episode)).one()
    assert episode.model == "fallback" and "Lisbon" in episode.gist and 0 <= episode.salience <= 1
    field = json.dumps(["engram_memory_enrichment_failures_total", {"reason": "invalid_json", "stage": "episodic"}],
                       sort_keys=True)
    assert real_redis.hget("metrics:counters", field) is not None


def _post(client, body):
    return client.post("/chat", data=json.dumps(body), content_type="application/json", buffered=False)


def _session_of(db_engine, exchange_ids: list[int]) -> str:
    """The lead's sessions code assigns sessions; until it does, close one here as a topic switch would."""
    with Session(db_engine) as session, session.begin():
        rows = session.scalars(select(Exchange).where(Exchange.id.in_(exchange_ids)).order_by(Exchange.id)).all()
        if rows[0].session_id is not None:
            session_id = rows[0].session_id
        else:
            conversation = create_session(session, user_id=rows[0].user_id, thread_id=rows[0].thread_id,
                                          topic="moving")
            session_id = conversation.id
            session.execute(update(Exchange).where(Exchange.id.in_(exchange_ids)).values(session_id=session_id))
        session.execute(update(ConversationSession).where(ConversationSession.id == session_id)
                        .values(ended_at=dt.datetime.now(dt.UTC), close_reason="topic_switch"))
    return session_id


def test_a_real_conversation_becomes_chunks_facts_and_an_episode(client, run_jobs, worker_context, fake_llm,
                                                                db_engine, real_redis):
    worker_context.embedder = HashEmbedder()
    fake_llm.route("MEMORY CHUNK", Json(CHUNK))
    fake_llm.route("EPISODE", Json(EPISODE))
    fake_llm.script(Reply("Exciting! When do you move?"), Reply("May is lovely in Lisbon."))
    first = _post(client, {"text": "I'm moving to Lisbon soon."})
    thread_id = first.headers["X-Thread-ID"]
    run_jobs((PROMPT_QUEUE,))
    list(first.response)
    second = _post(client, {"text": "The move is in May.", "thread_id": thread_id})
    run_jobs((PROMPT_QUEUE,))
    list(second.response)
    with db_engine.connect() as connection:
        exchange_ids = list(connection.execute(text("SELECT id FROM exchanges ORDER BY id")).scalars())
    assert len(exchange_ids) == 2
    for exchange_id in exchange_ids:  # the digest enqueues these; a duplicate enqueue is a no-op
        enqueue(real_redis, MEMORY_CHUNKER_QUEUE, "workers.memory_chunker.run", exchange_id,
                job_id=f"chunk-{exchange_id}")
    run_jobs()
    session_id = _session_of(db_engine, exchange_ids)
    enqueue(real_redis, EPISODIC_QUEUE, "workers.episodic_memory.run", session_id, job_id=f"episode-{session_id}")
    run_jobs()
    with Session(db_engine) as session:
        chunks = session.scalars(select(MemoryChunk)).all()
        facts = session.scalars(select(Fact)).all()
        episode = session.scalars(select(Episode)).one()
    assert sorted(c.exchange_id for c in chunks) == exchange_ids and {c.status for c in chunks} == {"ok"}
    assert [f.text for f in facts] == ["The user is moving to Lisbon in May."] and facts[0].mentions == 2
    assert episode.session_id == session_id and episode.exchange_ids == exchange_ids
    episode_prompt = next(r for r in fake_llm.requests if "EPISODE" in r["messages"][0]["content"])
    assert "I'm moving to Lisbon soon." in episode_prompt["messages"][0]["content"]
