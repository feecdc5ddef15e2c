"""A line's position in its thread (migration 0016) stays its rank by (occurred_at, id) after every store path —
the importer's COPY, an import into an existing thread out of time order, a live turn's derived lines, the lean
chat store's lines, a deleted exchange, a forgotten user, a moved line — and window_rows, which reads the lines
around its seeds by position, returns exactly the lines that ``reach`` steps either side in time order give."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import lineterms, turns
from services.memory.config import RecallConfig
from services.memory.forget import purge_rows
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.vectors import DEFERRED, derive_lines
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration

START = dt.datetime(2026, 2, 1, tzinfo=dt.UTC)


def _misplaced(session: Session) -> list[tuple]:  # type: ignore[type-arg]
    """Lines whose stored position is not their rank in their thread (empty when the positions are right)."""
    return session.execute(text(
        "SELECT l.id, l.thread_pos, n.rank FROM exchange_lines l JOIN (SELECT id, (row_number() OVER (PARTITION BY "
        "user_id, thread_id ORDER BY occurred_at, id) - 1)::int AS rank FROM exchange_lines) n ON n.id = l.id "
        "WHERE l.thread_pos IS DISTINCT FROM n.rank")).tuples().all()


def _import(db_engine, user: str, minutes: range, thread: str = "s1") -> None:
    lines, _, _ = parse_lines(json.dumps({"session": thread, "role": "user" if i % 2 == 0 else "assistant",
                                          "text": f"line {i} about gardens and boats",
                                          "timestamp": (START + dt.timedelta(minutes=i)).isoformat()})
                              for i in minutes)
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(lines), batch_size=16)


def test_positions_are_each_lines_rank_in_its_thread_after_every_store_path(db_engine):
    _import(db_engine, "alice", range(0, 80, 2))  # 40 lines by COPY, several batches
    _import(db_engine, "alice", range(1, 80, 4))  # older lines into the same thread, between the stored ones
    _import(db_engine, "bob", range(30))
    with Session(db_engine) as session:
        assert _misplaced(session) == []
        assert session.scalar(text("SELECT max(thread_pos) FROM exchange_lines WHERE user_id = 'alice'")) == 59
        thread = session.scalar(text("SELECT thread_id FROM exchange_lines WHERE user_id = 'alice' LIMIT 1"))
        # A live turn's lines (the trigger on exchanges), one in the thread's past, one after all of it.
        create_exchange(session, user_id="alice", thread_id=thread, user_text="a late note", reply="noted",
                        occurred_at=START + dt.timedelta(minutes=9, seconds=30))
        newest = create_exchange(session, user_id="alice", thread_id=thread, user_text="newest", reply="ok",
                                 occurred_at=START + dt.timedelta(hours=5))
        # The lean chat store: the exchange first, its lines later (the chunker's derive_lines).
        lean = create_exchange(session, user_id="alice", thread_id=thread, user_text="lean", reply="stored",
                               occurred_at=START + dt.timedelta(minutes=20, seconds=30))
        session.execute(text("UPDATE exchanges SET embedding_model = :m WHERE id = :id"),
                        {"m": DEFERRED, "id": lean.id})
        session.execute(text("DELETE FROM exchange_lines WHERE exchange_id = :id"), {"id": lean.id})
        assert derive_lines(session, [lean.id]) == 2
        session.commit()
        assert _misplaced(session) == []
        # Deletes: an exchange in the middle (its lines by cascade), single lines, a moved line, a whole user.
        session.execute(text("DELETE FROM exchanges WHERE id = :id"), {"id": newest.id - 1})
        session.execute(text("DELETE FROM exchange_lines WHERE user_id = 'alice' AND text LIKE 'line 1%'"))
        session.execute(text("UPDATE exchange_lines SET occurred_at = occurred_at - interval '1 day' "
                             "WHERE id = (SELECT max(id) FROM exchange_lines WHERE user_id = 'alice')"))
        session.commit()
        assert _misplaced(session) == []
        purge_rows(session, "bob")
        session.commit()
        assert _misplaced(session) == [] and session.scalar(text("SELECT count(*) FROM exchange_lines")) > 40


def _expected_window(session: Session, seed_ids: list[int], reach: int) -> set[int]:
    """The seeds and the ``reach`` lines either side of each in its thread's time order (the probes' definition)."""
    rows = session.execute(text("SELECT id, thread_id FROM exchange_lines WHERE user_id = 'alice' "
                                "ORDER BY thread_id, occurred_at, id")).tuples().all()
    expected: set[int] = set()
    for i, (line_id, thread) in enumerate(rows):
        if line_id in seed_ids:
            expected.update(other for other, other_thread in rows[max(0, i - reach):i + reach + 1]
                            if other_thread == thread)
    return expected


@pytest.mark.parametrize("reach", [1, 3])
def test_window_rows_reads_the_same_lines_around_its_seeds_as_steps_in_time_order(db_engine, reach):
    _import(db_engine, "alice", range(0, 120, 3), thread="s1")
    _import(db_engine, "alice", range(1, 120, 7), thread="s1")  # out of order into the thread
    _import(db_engine, "alice", range(0, 50), thread="s2")
    with Session(db_engine) as session:
        ids = session.scalars(text("SELECT id FROM exchange_lines WHERE user_id = 'alice' ORDER BY id")).all()
        rng = np.random.default_rng(5)
        terms = lineterms.line_terms(session, "alice", "boats", RecallConfig())
        for size in (1, 2, 5, 12, 30):
            # Seeds close together (overlapping ranges), apart, at a thread's ends.
            seeds = sorted({int(x) for x in rng.choice(ids, size=size, replace=False)} | {ids[0], ids[-1]})
            rows = turns.window_rows(session, "alice", ["SELECT unnest(CAST(:seed_ids AS bigint[]))"], [], reach,
                                     None, terms, RecallConfig(), arm_params={"seed_ids": seeds})
            got = rows.column("id")
            assert len(got) == len(set(got))  # no line twice
            assert set(got) == _expected_window(session, seeds, reach)
            assert {i for i, seed in zip(got, rows.column("seed"), strict=True) if seed} == set(seeds)
            at = [(thread, when, line_id) for thread, when, line_id in zip(rows.column("line_thread"),
                                                                              rows.column("occurred_at"), got,
                                                                              strict=True)]
            assert at == sorted(at)  # thread order


def test_two_transactions_appending_to_one_thread_never_share_a_position(db_engine):
    import threading

    _import(db_engine, "alice", range(0, 10))
    with Session(db_engine) as first, Session(db_engine) as second:
        thread = first.scalar(text("SELECT thread_id FROM exchange_lines WHERE user_id = 'alice' LIMIT 1"))
        create_exchange(first, user_id="alice", thread_id=thread, user_text="first writer", reply="one",
                        occurred_at=START + dt.timedelta(hours=1))  # not committed yet: holds the thread's lock

        def append() -> None:
            create_exchange(second, user_id="alice", thread_id=thread, user_text="second writer", reply="two",
                            occurred_at=START + dt.timedelta(hours=2))
            second.commit()

        writer = threading.Thread(target=append)
        writer.start()
        writer.join(timeout=1.0)
        assert writer.is_alive()  # the second writer waits for the first's lock ...
        first.commit()
        writer.join(timeout=10)
        assert not writer.is_alive()
    with Session(db_engine) as session:
        assert _misplaced(session) == []  # ... and then numbers its lines after the first's
        assert session.scalar(text("SELECT max(thread_pos) FROM exchange_lines WHERE thread_id = :t"),
                              {"t": thread}) == 13
