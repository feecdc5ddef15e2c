"""Classification and routing inside the digest job: audit rows, modes, tie-breaker."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace

import pytest
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db import Exchange, RoutingDecision
from services.errors import EmbeddingError
from services.queues import PROMPT_QUEUE
from services.router.mode_router import ModeRouter
from tests.fake_embedder import HashEmbedder
from tests.llm_steps import Error, Garbage, Reply
from tests.sse import parse_frames

pytestmark = pytest.mark.integration


def chat_turn(client, run_jobs, text, thread_id=None):
    """POST one message, run the prompt queue, and return the thread id, the request id and the frames."""
    body = {"text": text} if thread_id is None else {"text": text, "thread_id": thread_id}
    response = client.post("/chat", data=json.dumps(body), content_type="application/json", buffered=False)
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    return response.headers["X-Thread-ID"], response.headers["X-Request-ID"], frames


def converse(client, run_jobs, text, thread_id=None):
    thread, _, frames = chat_turn(client, run_jobs, text, thread_id)
    return thread, frames


def decision_for(db_engine, request_text):
    with Session(db_engine) as session:
        return session.execute(
            select(RoutingDecision, Exchange.mode, Exchange.reply, Exchange.topic)
            .join(Exchange, Exchange.id == RoutingDecision.exchange_id)
            .where(Exchange.user_text == request_text)
        ).one()


def test_every_turn_writes_a_decision_with_signals_and_scores(client, run_jobs, fake_llm, db_engine):
    thread_id = None
    for text in ["Tell me about the history of Lisbon.", "thanks!", "Schedule it."]:
        thread_id, frames = converse(client, run_jobs, text, thread_id)
        thinking = next(f for f in frames if f.event == "status" and f.data["stage"] == "thinking")
        message = next(f for f in frames if f.event == "message")
        assert thinking.data["mode"] == message.data["mode"]
        row = decision_for(db_engine, text)
        assert row.mode == message.data["mode"]
        assert set(row.RoutingDecision.scores) == {"RESPOND", "CLARIFY", "ACKNOWLEDGE", "ACT", "IGNORE"}
        assert row.RoutingDecision.signals["word_count"] > 0
        assert row.RoutingDecision.latency_ms > 0
        assert row.RoutingDecision.weights_version
    assert decision_for(db_engine, "thanks!").mode == "ACKNOWLEDGE"
    assert decision_for(db_engine, "Tell me about the history of Lisbon.").mode == "RESPOND"


def test_ignore_makes_no_llm_call_and_still_stores(client, run_jobs, fake_llm, db_engine):
    _, frames = converse(client, run_jobs, "?!?!")
    message = next(f for f in frames if f.event == "message")
    assert message.data["mode"] == "IGNORE" and message.data["text"] == ""
    assert fake_llm.requests == []
    assert decision_for(db_engine, "?!?!").reply == ""


def test_clarify_fires_on_an_underspecified_action(client, run_jobs, fake_llm, db_engine):
    fake_llm.script(Reply("What should I schedule, and when?"))
    _, frames = converse(client, run_jobs, "Schedule it.")
    assert next(f for f in frames if f.event == "message").data["mode"] == "CLARIFY"
    system = fake_llm.requests[-1]["messages"][0]["content"]
    assert "Mode: CLARIFY" in system and "What is missing:" in system


def test_acknowledge_uses_its_own_prompt(client, run_jobs, fake_llm):
    converse(client, run_jobs, "good morning!")
    assert "Mode: ACKNOWLEDGE" in fake_llm.requests[-1]["messages"][0]["content"]


@pytest.fixture
def close_call_router(worker_context, tmp_path):
    """A router whose tie-break margin is huge, so every decision is a close call."""
    configs = tmp_path / "configs"
    shutil.copytree(worker_context.settings.configs_dir, configs)
    weights = configs / "router.toml"
    weights.write_text(re.sub(r"(?m)^margin = .*$", "margin = 1000", weights.read_text(encoding="utf-8"), count=1))
    original = worker_context.router
    worker_context.router = ModeRouter(configs, None)
    yield
    worker_context.router = original


def test_tiebreaker_asks_the_llm_between_the_top_two(client, run_jobs, fake_llm, db_engine, close_call_router):
    fake_llm.route("scored almost equally", Reply("CLARIFY"))
    fake_llm.script(Reply("Which one do you mean?"))
    converse(client, run_jobs, "Explain how tides work.")
    row = decision_for(db_engine, "Explain how tides work.").RoutingDecision
    assert row.tiebreaker_used
    prompt = next(r for r in fake_llm.requests if "scored almost equally" in json.dumps(r))
    candidates = json.dumps(prompt)
    assert "RESPOND" in candidates
    if row.tiebreaker_result == "CLARIFY":
        assert row.mode == "CLARIFY"


def test_tiebreaker_failure_keeps_the_deterministic_mode(client, run_jobs, fake_llm, db_engine, close_call_router):
    fake_llm.route("scored almost equally", Error(500))
    converse(client, run_jobs, "Explain how tides work.")
    row = decision_for(db_engine, "Explain how tides work.").RoutingDecision
    assert row.tiebreaker_used and row.tiebreaker_result is None and row.mode == "RESPOND"


class BrokenEmbedder(HashEmbedder):
    def embed(self, text):  # type: ignore[no-untyped-def]
        raise EmbeddingError("model crashed")


def test_embedding_failure_falls_back_to_general(client, run_jobs, fake_llm, db_engine, worker_context):
    worker_context.embedder = BrokenEmbedder()
    _, frames = converse(client, run_jobs, "Tell me about volcanoes in Iceland.")
    message = next(f for f in frames if f.event == "message")
    assert message.data["topic"] == "general"
    with db_engine.connect() as connection:
        assert connection.execute(select(Exchange.embedding)).scalar_one() is None


def test_topic_switch_closes_the_session_and_queues_its_episode(client, run_jobs, fake_llm, db_engine, real_redis,
                                                                worker_context):
    thread_id, _ = converse(client, run_jobs, "Planning a hiking trip through Patagonia next spring.")
    converse(client, run_jobs, "Which boots handle Patagonian mud best?", thread_id)
    _, frames = converse(client, run_jobs, "Completely different: my sourdough starter smells of acetone.",
                         thread_id)
    with db_engine.connect() as connection:
        rows = connection.execute(select(Exchange.session_id, Exchange.topic).order_by(Exchange.id)).all()
    assert rows[0].session_id is not None
    assert rows[-1].session_id != rows[0].session_id
    closed = rows[0].session_id
    job = Queue("episodic-memory-queue", connection=real_redis).fetch_job(f"episode-{closed}")
    assert job is not None and job.args == (closed,)
    assert len(job.meta["exchange_ids"]) >= 1


def test_stored_exchange_carries_its_embedding_once_its_chunker_job_ran(client, run_jobs, fake_llm, db_engine):
    converse(client, run_jobs, "Tell me about the moons of Jupiter.")  # stored lean: tests/test_lean_store.py
    run_jobs(("memory-chunker-queue",))
    with db_engine.connect() as connection:
        row = connection.execute(select(Exchange.embedding, Exchange.embedding_model)).one()
    assert row.embedding is not None and len(row.embedding) == 384
    assert row.embedding_model == HashEmbedder().model_id


def test_routing_replay_is_deterministic(worker_context):
    router = replace(worker_context).router
    first = router.route_text("remind me on friday to water the plants")
    second = router.route_text("remind me on friday to water the plants")
    assert first.mode == second.mode == "ACT" and first.scores == second.scores


def test_recalled_memory_reaches_the_prompt_of_another_thread(client, run_jobs, fake_llm, db_engine):
    fake_llm.script(Reply("Porto is lovely."), Reply("Try the riverside walk."))
    converse(client, run_jobs, "My sister Clara moved to Porto last spring.")
    # The turn's lines and vector come with its chunker job, queued after the reply (stored lean); its LLM
    # call failing stores no fact, so only the recalled turn can bring Clara to the other thread.
    fake_llm.route("MEMORY CHUNK", Garbage())
    run_jobs(("memory-chunker-queue",))
    from services.threads import CURRENT_THREAD_KEY

    client.application.extensions["engram"].redis.delete(CURRENT_THREAD_KEY % "local")  # start a fresh thread
    thread_id, frames = converse(client, run_jobs, "Any tips for visiting Porto with my sister?")
    system = fake_llm.requests[-1]["messages"][0]["content"]
    assert "Clara" in system, system
    assert "My sister Clara moved to Porto" not in system.split("The conversation so far:")[-1]
