"""Facts' and episodes' vectors stay in their rows (migration 0017), so recall's fact and episode arms read no
TOAST index (an episode's vector out of line made its arm read every vector through it: ~11 ms a recall)."""

from __future__ import annotations

import pytest
from sqlalchemy import text
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
