"""Recall's window rows come back in PostgreSQL's binary format (services/db.BINARY_RESULTS): the same hits, to
the float and the timestamp, as when they come as text; and they carry no exchange texts, which a hit reads for
itself."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import BINARY, make_sessionmaker
from services.memory import turns
from services.memory.recall import recall
from tests.test_memory_speakers import NOW, QUESTION, PastimeEmbedder, _import

pytestmark = pytest.mark.integration

WINDOW = "WITH seeds AS"


@pytest.mark.parametrize("query", [QUESTION, "What did they say about the dinosaur hall last week?"])
def test_window_rows_in_binary_give_the_hits_they_give_as_text(db_engine, monkeypatch, query):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "binary-a")
    embedder = PastimeEmbedder(cache_size=0)
    formats: list[object] = []

    def after(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if statement.startswith(WINDOW):
            formats.append(cursor.format)

    event.listen(db_engine, "after_cursor_execute", after)
    try:
        with Session(db_engine) as session:
            binary = [hit.to_dict() for hit in recall(session, embedder, "binary-a", query, k=6, now=NOW,
                                                      reinforce=False)]
            monkeypatch.setattr(turns, "BINARY_RESULTS", "unread_option")  # the rows as text, as before
            as_text = [hit.to_dict() for hit in recall(session, embedder, "binary-a", query, k=6, now=NOW,
                                                       reinforce=False)]
    finally:
        event.remove(db_engine, "after_cursor_execute", after)
    assert formats[0] == BINARY and formats[-1] != BINARY  # the option made the difference
    assert binary and binary == as_text
    assert all(hit["signals"]["vector"] != 0.0 for hit in binary)  # similarities came through, not NULLs


def test_an_exchange_hit_shows_its_exchanges_thread_session_and_texts(db_engine):
    # window_rows reads no exchange texts: _select reads them for the returned hits only.
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "binary-b")
    with Session(db_engine) as session:
        hits = recall(session, PastimeEmbedder(cache_size=0), "binary-b", QUESTION, k=6, now=NOW, reinforce=False)
        stored = {row.id: row for row in session.execute(text(
            "SELECT id, thread_id, session_id, user_text, reply FROM exchanges WHERE user_id = 'binary-b'"))}
    exchanges = [hit for hit in hits if hit.kind == "exchange"]
    assert len(exchanges) >= 3
    for hit in exchanges:
        row = stored[hit.id]
        assert list(hit.meta) == ["thread_id", "session_id", "user_text", "reply", "line_id"]
        assert (hit.meta["thread_id"], hit.meta["session_id"]) == (row.thread_id, row.session_id)
        assert (hit.meta["user_text"], hit.meta["reply"]) == (row.user_text, row.reply)
        assert hit.meta["line_id"] in [line["line_id"] for line in hit.lines]
