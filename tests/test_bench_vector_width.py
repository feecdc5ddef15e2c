"""bench.vector_width: a throwaway database's vector columns take a wider model's vectors, and nothing else's."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from bench.vector_width import set_vector_width
from services.db import make_engine
from services.migrate import upgrade_head


@pytest.fixture
def fresh_engine(pg_server):  # type: ignore[no-untyped-def]
    """A freshly migrated database of its own on the session's server (the shared one keeps 384)."""
    admin = make_engine(pg_server.url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text("DROP DATABASE IF EXISTS vector_width_test"))
        connection.execute(text("CREATE DATABASE vector_width_test"))
    own = make_url(pg_server.url).set(database="vector_width_test")
    engine = make_engine(own.render_as_string(hide_password=False))
    upgrade_head(engine)
    yield engine
    engine.dispose()
    with admin.connect() as connection:
        connection.execute(text("DROP DATABASE vector_width_test"))
    admin.dispose()


def _widths(engine) -> set[int]:  # type: ignore[no-untyped-def]
    with engine.connect() as connection:
        return set(connection.scalars(text(
            "SELECT DISTINCT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE a.atttypid = 'vector'::regtype AND c.relkind = 'r' AND NOT a.attisdropped")))


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(map(str, vector.tolist())) + "]"


def _store_word(engine, word: str, vector: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO users (id) VALUES ('u') ON CONFLICT DO NOTHING"))
        connection.execute(text("INSERT INTO vocabulary (user_id, word, lexeme, embedding) "
                                "VALUES ('u', :w, :w, CAST(:v AS vector))"), {"w": word, "v": _literal(vector)})


def test_a_fresh_database_stores_and_searches_768_dimension_vectors(fresh_engine):
    assert _widths(fresh_engine) == {384}
    changed = set_vector_width(fresh_engine, 768)
    assert {"exchanges.embedding", "exchange_lines.embedding", "vocabulary.embedding"} <= set(changed)
    assert _widths(fresh_engine) == {768}
    with fresh_engine.connect() as connection:  # the HNSW index recall's word search needs is there again
        assert connection.scalar(text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_vocabulary_embedding'"))
    _store_word(fresh_engine, "swimming", np.eye(768)[0])
    _store_word(fresh_engine, "museum", np.eye(768)[1])
    with fresh_engine.begin() as connection:
        nearest = connection.scalar(text("SELECT word FROM vocabulary ORDER BY embedding <=> CAST(:v AS vector) "
                                         "LIMIT 1"), {"v": _literal(np.eye(768)[1])})
    assert nearest == "museum"
    assert set_vector_width(fresh_engine, 768) == []  # a kept bench database is left as it is


def test_a_database_holding_vectors_is_never_retyped(fresh_engine):
    _store_word(fresh_engine, "swimming", np.eye(384)[0])
    with pytest.raises(RuntimeError, match="already holds vectors"):
        set_vector_width(fresh_engine, 768)
    assert _widths(fresh_engine) == {384}
