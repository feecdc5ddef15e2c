"""Facts' and episodes' vectors stay in their rows (migration 0017), so recall's fact and episode arms read no
TOAST index (an episode's vector out of line made its arm read every vector through it: ~11 ms a recall)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from services.memory.models import Episode, Fact
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_user

pytestmark = pytest.mark.integration


def test_a_long_episodes_and_a_long_facts_vector_are_stored_in_their_rows(db_engine):
    vector = HashEmbedder().embed("a session about the garden")
    summary = " ".join(f"we talked about the garden and its {i} tomatoes" for i in range(40))  # ~1.9 kB
    with Session(db_engine) as session:
        create_user(session, user_id="inline")
        session.add(Episode(user_id="inline", session_id="s1", title="The garden", gist="tomatoes",
                            summary=summary, embedding=vector))
        session.add(Fact(user_id="inline", text=summary[:1200], embedding=vector))
        session.commit()
        outside = session.execute(text(
            "SELECT (SELECT count(*) FROM episodes WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL), "
            "(SELECT count(*) FROM facts WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL)")).one()
    assert tuple(outside) == (0, 0)


def test_the_upgrade_moves_the_vectors_of_episodes_stored_before_it_into_their_rows(db_engine):
    from alembic import command

    from services.migrate import alembic_config

    vector = HashEmbedder().embed("a session about the garden")
    summary = " ".join(f"we talked about the garden and its {i} tomatoes" for i in range(40))
    toasted = text("SELECT count(*) FROM episodes WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL")
    config = alembic_config()
    with db_engine.connect() as connection:
        config.attributes["connection"] = connection
        try:
            command.downgrade(config, "0016")
            connection.commit()
            with Session(bind=connection) as session:
                create_user(session, user_id="before")
                session.add(Episode(user_id="before", session_id="s1", title="The garden", gist="tomatoes",
                                    summary=summary, embedding=vector))
                session.add(Episode(user_id="before", session_id="s2", title="Short", gist="", summary="brief",
                                    embedding=vector))
                session.commit()
            assert connection.scalar(toasted) == 1, "stored before 0017, the long episode's vector is out of line"
        finally:
            command.upgrade(config, "head")
            connection.commit()
        assert connection.scalar(toasted) == 0
    with Session(db_engine) as session:
        kept = session.scalars(select(Episode.embedding).order_by(Episode.session_id)).all()
    assert [np.asarray(v, dtype=np.float32).tobytes() for v in kept] == [np.float32(vector).tobytes()] * 2, \
        "the same floats"
WORDS = ["garden", "tomatoes", "compost", "greenhouse", "seedlings", "watering", "harvest"]


def _toast_blocks_read(engine) -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_stat_clear_snapshot()"))
        return int(connection.execute(text(
            "SELECT coalesce(toast_blks_hit, 0) + coalesce(toast_blks_read, 0) FROM pg_statio_user_tables "
            "WHERE relname = 'episodes'")).scalar_one())


def test_an_episodes_words_out_of_line_are_read_once_a_row_and_score_as_read_in_place(db_engine, monkeypatch):
    from services.memory import search
    from services.memory.config import RecallConfig

    embedder = HashEmbedder()
    with Session(db_engine) as session:
        create_user(session, user_id="toasty")
        for i in range(20):  # a session's summary beside its inline vector: the row passes the TOAST threshold
            summary = " ".join(f"{WORDS[(i + j) % len(WORDS)]} note{i}x{j}" for j in range(60))
            session.add(Episode(user_id="toasty", session_id=f"s{i}", title=f"Garden day {i}", gist=WORDS[i % 7],
                                summary=summary, embedding=embedder.embed(summary)))
        session.commit()
        assert session.scalar(text("SELECT count(*) FROM episodes WHERE user_id = 'toasty' "
                                   "AND pg_column_toast_chunk_id(search) IS NOT NULL")) == 20
    terms = search.Terms(WORDS, [1.0 + i / 10 for i in range(len(WORDS))], WORDS)
    cfg = RecallConfig()
    now = dt.datetime.now(dt.UTC)
    window = (now - dt.timedelta(days=1), now + dt.timedelta(days=1))  # every episode: its arm orders by the words

    def candidates() -> tuple[list[tuple[int, float]], int]:
        """(id, lexical signal) of the episode candidates, and the TOAST blocks their statement read."""
        with db_engine.connect() as connection:
            before = _toast_blocks_read(db_engine)
            found = search.kind_candidates(connection, "episode", "toasty", None, terms, window, 50, cfg)
            connection.execute(text("SELECT pg_stat_force_next_flush()"))
            connection.rollback()
        return sorted((c.id, c.lex) for c in found), _toast_blocks_read(db_engine) - before

    once, read_once = candidates()
    monkeypatch.setitem(search.KINDS, "episode", replace(search.KINDS["episode"], lexemes="t.search"))
    in_place, read_each_time = candidates()
    assert len(once) == 20 and once == in_place  # the same rows, the same signal to the bit
    # Read once for each arm and for the signal, not once per query word (7 here) and per use.
    assert read_once * 3 < read_each_time, (read_once, read_each_time)
