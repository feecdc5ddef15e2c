"""A chat turn is stored lean (migration 0015): the reply's store writes the exchange without its lines and
vector; the chunker job queued after the reply derives both, exactly as the lines trigger and the turn's
re-embedding did; if that job never runs, the vector backfill (queued by its periodic service) does it."""

from __future__ import annotations

import time

import pytest
from rq import Queue
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from services.db import Exchange
from services.memory.models import ExchangeLine
from services.memory.vectors import DEFERRED, fill_all, pending_count
from services.periodic import backfill
from services.queues import MEMORY_CHUNKER_QUEUE
from services.service_call import ServiceCall
from tests.fake_embedder import HashEmbedder
from tests.llm_steps import Json, Reply
from tests.memory_builders import create_exchange
from tests.test_memory_chunker import GOOD_CHUNK
from tests.test_understanding import chat_turn

pytestmark = pytest.mark.integration

SAID = "My sister Clara moved to Porto last spring."
ANSWERED = "Porto is lovely in spring."


def _lines(db_engine, exchange_id: int) -> list[tuple]:  # type: ignore[type-arg]
    with Session(db_engine) as session:
        # These columns only: a downgrade test reads them below migrations that add others (0016's thread_pos).
        return session.execute(select(ExchangeLine.position, ExchangeLine.speaker, ExchangeLine.text,
                                      ExchangeLine.external_id, ExchangeLine.occurred_at)
                               .where(ExchangeLine.exchange_id == exchange_id)
                               .order_by(ExchangeLine.position)).tuples().all()


def _line_count(db_engine, user_id: str) -> int:
    with db_engine.connect() as connection:
        return int(connection.execute(text("SELECT coalesce((SELECT lines FROM exchange_line_counts "
                                            "WHERE user_id = :u), 0)"), {"u": user_id}).scalar_one())


def _turn(client, run_jobs, fake_llm, db_engine) -> Exchange:  # type: ignore[no-untyped-def]
    fake_llm.script(Reply(ANSWERED))
    _, _, frames = chat_turn(client, run_jobs, SAID)
    with Session(db_engine) as session:
        return session.get(Exchange, frames[-2].data["exchange_id"])


def _as_the_trigger_derives(db_engine, exchange: Exchange) -> list[tuple]:  # type: ignore[type-arg]
    """The lines migration 0007's trigger derives for an exchange of the same texts and time."""
    with Session(db_engine) as session, session.begin():
        twin = create_exchange(session, user_id=exchange.user_id, thread_id=exchange.thread_id,
                               user_text=exchange.user_text, reply=exchange.reply, occurred_at=exchange.created_at)
        twin_id = twin.id
    lines = _lines(db_engine, twin_id)
    with Session(db_engine) as session, session.begin():
        session.delete(session.get(Exchange, twin_id))
    return lines


def test_the_reply_stores_no_lines_and_no_vector_and_the_chunker_job_derives_both(client, run_jobs, fake_llm,
                                                                                 db_engine):
    stored = _turn(client, run_jobs, fake_llm, db_engine)
    assert (stored.embedding, stored.embedding_model) == (None, DEFERRED)
    assert _lines(db_engine, stored.id) == [] and _line_count(db_engine, stored.user_id) == 0
    expected = _as_the_trigger_derives(db_engine, stored)
    assert [line[:3] for line in expected] == [(0, "user", SAID), (1, "assistant", ANSWERED)]

    fake_llm.route("MEMORY CHUNK", Json(GOOD_CHUNK))
    run_jobs((MEMORY_CHUNKER_QUEUE,))  # the chunker job the reply queued
    assert _lines(db_engine, stored.id) == expected
    assert _line_count(db_engine, stored.user_id) == 2
    with Session(db_engine) as session:
        done = session.get(Exchange, stored.id)
        assert done.embedding_model == HashEmbedder().model_id
        assert list(done.embedding) == pytest.approx(list(HashEmbedder().embed(f"{SAID}\n{ANSWERED}")), abs=1e-6)
        assert pending_count(session) == 0
    with db_engine.connect() as connection:  # its words are in the index proper: no recall reads them as pending
        assert connection.execute(text("SELECT gin_clean_pending_list('ix_exchange_lines_search')")).scalar() == 0

    from workers import memory_chunker
    assert memory_chunker.run(stored.id) == "exists"  # a retried job derives nothing twice
    assert _lines(db_engine, stored.id) == expected and _line_count(db_engine, stored.user_id) == 2


def test_a_turn_whose_chunker_job_never_ran_is_completed_by_the_vector_backfill(client, run_jobs, fake_llm,
                                                                               db_engine, worker_context, real_redis):
    stored = _turn(client, run_jobs, fake_llm, db_engine)
    expected = _as_the_trigger_derives(db_engine, stored)
    Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).empty()  # its worker died with the job: gone

    result = backfill.run(ServiceCall("vector_backfill", f"fire-{time.monotonic()}", worker_context))
    assert result.outcome == "ran" and result.details["pending"] == 1
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    assert _lines(db_engine, stored.id) == expected and _line_count(db_engine, stored.user_id) == 2
    with Session(db_engine) as session:
        done = session.get(Exchange, stored.id)
        assert done.embedding is not None and done.embedding_model == HashEmbedder().model_id
    assert fill_all(worker_context.sessions, HashEmbedder()) == 0  # nothing waits; nothing derived twice
    assert _lines(db_engine, stored.id) == expected


def test_a_turn_forgotten_before_its_chunker_job_leaves_nothing_behind(client, run_jobs, fake_llm, db_engine):
    stored = _turn(client, run_jobs, fake_llm, db_engine)
    with Session(db_engine) as session, session.begin():
        session.delete(session.get(Exchange, stored.id))
    from workers import memory_chunker
    assert memory_chunker.run(stored.id) == "missing"
    assert _lines(db_engine, stored.id) == [] and _line_count(db_engine, stored.user_id) == 0


def test_a_downgrade_past_the_lean_store_derives_the_lines_of_turns_still_waiting(client, run_jobs, fake_llm,
                                                                                  db_engine):
    from alembic import command
    from alembic.script import ScriptDirectory

    from services.migrate import alembic_config

    stored = _turn(client, run_jobs, fake_llm, db_engine)
    expected = _as_the_trigger_derives(db_engine, stored)
    config = alembic_config()
    below = ScriptDirectory.from_config(config).get_revision("0015").down_revision
    with db_engine.connect() as connection:
        config.attributes["connection"] = connection
        try:
            command.downgrade(config, below)
            connection.commit()
            assert _lines(db_engine, stored.id) == expected
            row = connection.execute(select(Exchange.embedding, Exchange.embedding_model)
                                     .where(Exchange.id == stored.id)).one()
            assert (row.embedding, row.embedding_model) == (None, None), "its vector left to the backfill"
        finally:
            command.upgrade(config, "head")
            connection.commit()
    with Session(db_engine) as session:
        assert pending_count(session) == 1
