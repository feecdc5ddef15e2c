"""What one digest turn leaves in Redis: the thread's topic and working memory, the output, no chat-priority
mark (whether the turn ends well or not), and its events in order with the last delta before ``message``."""

from __future__ import annotations

import json

import pytest

import workers.digest as digest_module
from services.llm.priority import ChatPriority
from services.queues import PROMPT_QUEUE
from tests.llm_steps import Reply
from tests.sse import parse_frames
from tests.test_understanding import chat_turn

pytestmark = pytest.mark.integration


def test_a_turn_records_topic_working_memory_and_output_and_clears_its_mark(client, run_jobs, fake_llm,
                                                                            worker_context):
    # Small chunks arriving at once: the first delta goes out alone, the rest is held for the message's trip.
    fake_llm.script_stream(Reply("Lisbon sits on seven hills by the Tagus.", chunk_size=3),
                           Reply("The tram 28 climbs through Alfama.", chunk_size=3))
    thread_id, request_id, frames = chat_turn(client, run_jobs, "Tell me about the history of Lisbon, Portugal.")
    kinds = [f.event for f in frames]
    assert kinds[-2:] == ["message", "done"] and kinds.count("message") == 1
    assert kinds.index("message") > max(i for i, kind in enumerate(kinds) if kind == "delta")
    message = frames[-2].data
    assert "".join(f.data["text"] for f in frames if f.event == "delta") == message["text"]
    threads = worker_context.threads
    state, memory = threads.snapshot(thread_id)
    assert state.topic == message["topic"] and state.topic_confidence > 0
    assert [item["request_id"] for item in memory] == [request_id] and state.turns == 1
    assert worker_context.events.get_output(request_id)["exchange_id"] == message["exchange_id"]
    assert ChatPriority(worker_context.redis).chats_in_flight() == 0

    _, second_id, frames = chat_turn(client, run_jobs, "What about trams in Lisbon, Portugal?", thread_id)
    state, memory = threads.snapshot(thread_id)
    assert [item["request_id"] for item in memory] == [request_id, second_id] and state.turns == 2
    assert state.topic == frames[-2].data["topic"], "the thread's topic is the latest turn's"
    assert ChatPriority(worker_context.redis).chats_in_flight() == 0


def test_a_turn_that_fails_clears_its_chat_priority_mark(client, run_jobs, fake_llm, worker_context, monkeypatch):
    def broken_store(*args, **kwargs):
        raise RuntimeError("the database went away mid-turn")

    monkeypatch.setattr(digest_module, "store", broken_store)
    chat_turn(client, run_jobs, "Tell me about the history of Porto.")
    assert ChatPriority(worker_context.redis).chats_in_flight() == 0, "background LLM work must not wait for it"


def test_a_thread_row_forgotten_while_the_message_was_queued_is_made_again(client, run_jobs, fake_llm, db_engine):
    from sqlalchemy import delete, select

    from services.db import Exchange, Thread

    thread_id, _, _ = chat_turn(client, run_jobs, "Tell me about the history of Lisbon.")
    response = client.post("/chat", data=json.dumps({"text": "And Porto?", "thread_id": thread_id}),
                           content_type="application/json", buffered=False)
    with db_engine.begin() as connection:  # the thread's row goes while the message waits in the queue
        connection.execute(delete(Exchange).where(Exchange.thread_id == thread_id))
        connection.execute(delete(Thread).where(Thread.id == thread_id))
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    assert [f.event for f in frames][-2:] == ["message", "done"]
    with db_engine.connect() as connection:
        assert connection.execute(select(Thread.user_id).where(Thread.id == thread_id)).scalar_one()
        assert connection.execute(select(Exchange.user_text).where(Exchange.thread_id == thread_id)).scalars().all() \
            == ["And Porto?"]


def test_a_topic_counts_each_stored_turn_once_and_its_centroid_moves_with_it(client, run_jobs, fake_llm, db_engine):
    from sqlalchemy import func, select

    from services.db import Exchange, Topic

    thread_id, _, _ = chat_turn(client, run_jobs, "Planning a hiking trip through Patagonia next spring.")
    with db_engine.connect() as connection:
        founded = connection.execute(select(Topic.centroid)).scalar_one()
    for text in ("Which hiking boots suit a Patagonia trip in spring?", "Patagonia hiking trip: which trails?"):
        chat_turn(client, run_jobs, text, thread_id)
    with db_engine.connect() as connection:
        topics = connection.execute(select(Topic.name, Topic.message_count, Topic.centroid)).all()
        per_topic = dict(connection.execute(select(Exchange.topic, func.count()).group_by(Exchange.topic)).all())
    assert {name: count for name, count, _ in topics} == per_topic, "one count per stored turn of the topic"
    moved = [centroid for name, count, centroid in topics if count > 1]
    assert moved and any(abs(a - b) > 1e-6 for a, b in zip(moved[0], founded, strict=True)), "the centroid moved"


def test_a_retried_turn_that_finds_its_exchange_stored_does_not_move_the_topic_again(client, run_jobs, fake_llm,
                                                                                   db_engine, worker_context):
    from sqlalchemy import select

    from services.db import Topic
    from workers.digest import run

    thread_id, _, _ = chat_turn(client, run_jobs, "Planning a hiking trip through Patagonia next spring.")
    _, request_id, _ = chat_turn(client, run_jobs, "Which hiking boots suit a Patagonia trip in spring?", thread_id)
    with db_engine.connect() as connection:
        before = connection.execute(select(Topic.name, Topic.message_count, Topic.centroid).order_by(Topic.id)).all()
    assert sum(count for _, count, _ in before) == 2, "each stored turn moved its topic once, after its reply"
    worker_context.redis.delete(f"output:{request_id}")  # a crash after the store: the retry delivers the stored row
    run(request_id)
    with db_engine.connect() as connection:
        after = connection.execute(select(Topic.name, Topic.message_count, Topic.centroid).order_by(Topic.id)).all()
    assert [(name, count) for name, count, _ in after] == [(name, count) for name, count, _ in before]
    assert [list(c) for _, _, c in after] == [list(c) for _, _, c in before]


def test_a_turn_queues_its_exchanges_chunker_job_once_and_a_retry_does_not_queue_another(client, run_jobs, fake_llm,
                                                                                      worker_context):
    from rq import Queue

    from services.queues import CHUNKER_JOB, MEMORY_CHUNKER_QUEUE, MEMORY_JOB_TIMEOUT_S, job_owner
    from workers.digest import run

    fake_llm.script(Reply("Enrich me later."))
    _, request_id, frames = chat_turn(client, run_jobs, "Tell me about the tides of the Atlantic.")
    exchange_id = frames[-2].data["exchange_id"]
    chunker = Queue(MEMORY_CHUNKER_QUEUE, connection=worker_context.redis)
    assert chunker.get_job_ids() == [f"chunk-{exchange_id}"]
    job = chunker.fetch_job(f"chunk-{exchange_id}")
    assert job.func_name == CHUNKER_JOB and job.args == (exchange_id,) and job.get_status() == "queued"
    assert job_owner(job.meta) is not None and job.timeout == MEMORY_JOB_TIMEOUT_S and job.retries_left == 2
    worker_context.redis.delete(f"output:{request_id}")  # a crash before the last transaction: the retry redoes it
    run(request_id)
    assert chunker.get_job_ids() == [f"chunk-{exchange_id}"]
