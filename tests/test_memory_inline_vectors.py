"""Facts' and episodes' vectors stay in their rows (migration 0017), so recall's fact and episode arms read no
TOAST index (an episode's vector out of line made its arm read every vector through it: ~11 ms a recall)."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from services.embeddings import HashEmbedder
from services.memory.models import Episode, Fact
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
