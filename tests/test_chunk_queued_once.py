"""A chat turn's exchange is chunked by one chunker job, whether its thread expires before or after that job ran.

The digest queues the exchange's chunk job; the thread expiry flushes a thread's memory by queueing the chunk job
of every exchange still without a chunk. When the chunker's first run met the LLM down, its re-run waits in RQ's
scheduled registry under an id of its own (``chunk-<id>-retry1``), so the expiry saw no chunk job of the exchange
and queued ``chunk-<id>`` again: two runs for one exchange (the second finding the chunk stored), both listed in
the chunker's registries.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from rq import Queue
from sqlalchemy import func, select

from services.janitor import ScheduledMover
from services.memory.models import Fact, MemoryChunk
from services.periodic import expiry
from services.queues import MEMORY_CHUNKER_QUEUE
from services.service_call import ServiceCall
from tests.llm_steps import Error, Json
from tests.test_memory_chunker import GOOD_CHUNK
from tests.test_understanding import chat_turn
from workers import memory_chunker

pytestmark = pytest.mark.integration


def expire_threads(worker_context: Any) -> None:
    """The thread expiry, seven hours on: every thread of the test is idle past its six hours."""
    at = dt.datetime.now(dt.UTC) + dt.timedelta(hours=7)
    call = ServiceCall("thread_expiry", f"thread_expiry@{at:%H%M%S}", worker_context, clock=lambda: at,
                       options={"idle_s": 6 * 3600})
    assert expiry.run(call).details["expired"] == 1


def run_due_retries(real_redis: Any) -> None:
    """The scheduler role's mover, as if the retries' back-off had passed."""
    queue = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis)
    registry = queue.scheduled_job_registry
    for job_id in registry.get_job_ids():
        registry.schedule(queue.fetch_job(job_id), dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
    ScheduledMover(real_redis, (MEMORY_CHUNKER_QUEUE,)).tick()


@pytest.mark.parametrize("chunker_before_expiry", ["not run yet", "met the LLM down"])
def test_after_a_digest_and_its_threads_expiry_one_chunk_job_runs_and_the_chunk_is_stored_once(
        client, run_jobs, fake_llm, worker_context, db_engine, real_redis, monkeypatch,
        chunker_before_expiry: str) -> None:
    runs: list[int] = []
    chunk = memory_chunker.run

    def counted(exchange_id: int, attempt: int = 0) -> str:
        runs.append(exchange_id)
        return chunk(exchange_id, attempt)

    monkeypatch.setattr(memory_chunker, "run", counted)  # RQ finds the job's function by its dotted path
    _, _, frames = chat_turn(client, run_jobs, "I just moved to Lisbon! Any cafe tips?")
    exchange_id = frames[-2].data["exchange_id"]
    if chunker_before_expiry == "met the LLM down":
        fake_llm.route("MEMORY CHUNK", Error(503))
        run_jobs((MEMORY_CHUNKER_QUEUE,))
        assert runs == [exchange_id]
        fake_llm.reset()
    runs.clear()

    expire_threads(worker_context)
    fake_llm.route("MEMORY CHUNK", Json(GOOD_CHUNK))
    run_due_retries(real_redis)
    run_jobs((MEMORY_CHUNKER_QUEUE,))

    assert runs == [exchange_id], "the exchange's chunk job ran more than once after the expiry"
    with worker_context.sessions() as session:
        chunks = session.scalars(select(MemoryChunk.status).where(MemoryChunk.exchange_id == exchange_id)).all()
        facts = session.execute(select(Fact.text, func.count()).group_by(Fact.text)).all()
    assert chunks == ["ok"]
    assert facts and all(count == 1 for _, count in facts)
    chunker = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis)
    assert chunker.get_job_ids() == [] and chunker.scheduled_job_registry.get_job_ids() == []
