"""A long time window's exact arm split in two by time (services/memory/windowparts.py): the earlier part on the
second connection after the HNSW arm, the later one inside window_rows on recall's own. The nearest of both parts
are the window arm's own ids, and recall's hits are those of the arm run whole."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import search, sidearms, windowparts
from services.memory.recall import recall
from tests.test_memory_speakers import NOW, SESSIONS, PastimeEmbedder, _import

UTC = dt.UTC


def test_a_day_is_not_split_and_a_month_is_split_at_the_second_connections_share():
    day = (dt.datetime(2026, 5, 3, tzinfo=UTC), dt.datetime(2026, 5, 4, tzinfo=UTC))
    assert windowparts.split(day) is None and windowparts.split(None) is None
    may = (dt.datetime(2026, 5, 1, tzinfo=UTC), dt.datetime(2026, 6, 1, tzinfo=UTC))
    earlier, later = windowparts.split(may)
    assert earlier[0] == may[0] and later[1] == may[1] and earlier[1] == later[0]
    assert earlier[1] == may[0] + (may[1] - may[0]) * windowparts.SIDE_SHARE


@pytest.mark.integration
def test_the_nearest_of_both_parts_are_the_window_arms_own_ids(db_engine):
    _import(make_sessionmaker(db_engine), "parts")
    embedder = PastimeEmbedder(cache_size=0)
    # Sessions every three weeks from March 23rd to July 6th: four before the split (May 31st), two after it.
    window = (dt.datetime(2025, 3, 1, tzinfo=UTC), dt.datetime(2025, 8, 1, tzinfo=UTC))
    earlier, later = windowparts.split(window)
    assert dt.datetime(2025, 5, 26, tzinfo=UTC) < earlier[1] < dt.datetime(2025, 6, 15, tzinfo=UTC)
    with Session(db_engine) as session:
        for words in ("pottery class", "dinosaur museum", "camping in the mountains", "sunset painting"):
            qvec = embedder.embed(words)
            for limit in (1, 2, 3, 5, 8, 12):
                whole = search.window_arm(session, "exchange", "parts", window, qvec, search.Terms(), limit)
                params = {"user": "parts", "limit": limit, "qvec": qvec}
                rows = session.execute(search.statement(windowparts.part_sql(earlier, params, "side"), True),
                                       params).all()
                later_part = windowparts.Later(later, [(row[0], row[1]) for row in rows])
                merged = session.scalars(search.statement(windowparts.merged_sql(later_part, params), True),
                                         params).all()
                assert merged == whole, (words, limit)
    assert len(whole) == 12 == sum(len(turns) // 2 for turns in SESSIONS)  # the last ran over every exchange


@pytest.mark.integration
def test_recall_runs_a_long_windows_parts_on_both_connections_with_the_hits_of_the_arm_whole(db_engine,
                                                                                           monkeypatch):
    _import(make_sessionmaker(db_engine), "parts")
    monkeypatch.setattr(windowparts, "SIDE_SHARE", 0.3)  # 2025 split on April 20th: sessions on both sides
    query = "What did Melanie do in 2025?"

    def hits() -> list[dict]:
        with Session(db_engine) as session:
            return [hit.to_dict() for hit in recall(session, PastimeEmbedder(cache_size=0), "parts", query, k=6,
                                                    now=NOW, reinforce=False)]

    with monkeypatch.context() as patch:
        patch.setattr(sidearms, "side_engine", lambda session, own_only: None)
        whole = hits()
    sent: list[tuple[str, bool]] = []
    main = threading.get_ident()
    event.listen(db_engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *args: sent.append((statement, threading.get_ident() != main)))
    assert whole and hits() == whole
    assert any(aside and "side_start" in statement for statement, aside in sent)
    assert any(not aside and "later_start" in statement and "WITH seeds" in statement for statement, aside in sent)
    with Session(db_engine) as session:  # both parts held exchanges
        counts = session.execute(text(
            "SELECT count(*) FILTER (WHERE occurred_at < '2025-04-20'), count(*) FILTER (WHERE occurred_at >= "
            "'2025-04-20') FROM exchanges WHERE user_id = 'parts'")).one()
    assert min(counts) > 0
