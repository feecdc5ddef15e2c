"""Recall runs its exchange arms (the vector kNN, a time window's nearest) on a second pooled connection once the
query vector is there, beside the terms' and the BM25 arm's statements (services/memory/sidearms.py), with a named
speaker's arm: the hits are those of the arms run inside the turns' statement; a transaction that has written keeps
every arm on its own connection (another would not see what it wrote), as does one reading from a snapshot, or one
whose pool has no connection to spare; a failing second connection falls back to the arms inline."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sqlalchemy import Connection, event, text
from sqlalchemy.orm import Session
from sqlalchemy.pool import QueuePool, StaticPool

from services.db import make_sessionmaker
from services.memory import sidearms
from services.memory.facts import remember_fact
from services.memory.models import Episode
from services.memory.recall import recall
from tests.test_memory_speakers import NOW, QUESTION, PastimeEmbedder, _import

pytestmark = pytest.mark.integration

QUERIES = [QUESTION, "What did Melanie do in April 2025?", "Which museum hall did they visit?"]
VECTOR_ARM = "ORDER BY t.embedding <=> "  # the kNN arm's clause, wherever it runs
SPEAKER_ARM = "embedding IS NOT NULL ORDER BY embedding <=> "  # the named speaker's arm (speakers.speaker_lines_sql)
OTHER_KINDS = ("AS access FROM facts t", "AS access FROM episodes t")  # the fact and episode candidates' statements


def _hits(session: Session, query: str, embedded: bool) -> list[dict]:
    embedder = PastimeEmbedder(cache_size=0)
    vector = None if embedded else embedder.embed(query)
    return [hit.to_dict() for hit in recall(session, embedder, "side", query, k=6, now=NOW, reinforce=False,
                                            query_embedding=vector)]


def _watch(engine) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    """(statement, sent from another thread than the test's) for every statement from now on."""
    sent: list[tuple[str, bool]] = []
    main = threading.get_ident()
    event.listen(engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *args: sent.append((statement, threading.get_ident() != main)))
    return sent


def _inline_and_beside(engine, monkeypatch, embedded: bool):  # type: ignore[no-untyped-def]
    """Each query's hits without a second connection, then with one, and the statements the second run sent."""
    with monkeypatch.context() as patch:
        patch.setattr(sidearms, "side_engine", lambda session, own_only: None)
        with Session(engine) as session:
            inline = {query: _hits(session, query, embedded) for query in QUERIES}
    sent = _watch(engine)
    with Session(engine) as session:
        beside = {query: _hits(session, query, embedded) for query in QUERIES}
    return inline, beside, sent


@pytest.mark.parametrize("embedded", [False, True])
def test_the_exchange_arms_on_a_second_connection_find_what_they_find_inline(db_engine, monkeypatch, embedded):
    _import(make_sessionmaker(db_engine), "side")
    inline, beside, sent = _inline_and_beside(db_engine, monkeypatch, embedded)
    assert all(inline.values()) and beside == inline
    # The kNN ran on another thread's connection, and its ids reached the turns' statement as an array.
    assert any(aside and VECTOR_ARM in statement for statement, aside in sent)
    assert not any(VECTOR_ARM in statement for statement, aside in sent if not aside)
    assert any("unnest(CAST(%(exchange_ids)s AS bigint[]))" in statement for statement, _ in sent)


@pytest.mark.parametrize("embedded", [False, True])
def test_a_named_speakers_arm_runs_beside_the_exchange_arms_with_the_same_hits(db_engine, monkeypatch, embedded):
    _import(make_sessionmaker(db_engine), "side")
    inline, beside, sent = _inline_and_beside(db_engine, monkeypatch, embedded)
    assert all(inline.values()) and beside == inline  # QUESTION names Melanie: her arm's lines are among the seeds
    assert any(aside and SPEAKER_ARM in statement for statement, aside in sent)
    assert not any(SPEAKER_ARM in statement for statement, aside in sent if not aside)
    assert any("unnest(CAST(%(speaker_ids)s AS bigint[]))" in statement for statement, _ in sent)


def test_a_transaction_that_wrote_keeps_its_arms_on_its_own_connection(db_engine):
    _import(make_sessionmaker(db_engine), "side")
    with Session(db_engine) as session:
        before = _hits(session, QUESTION, False)
        session.rollback()
        sent = _watch(db_engine)
        # An exchange's reply changed in this transaction, not committed: another connection would not see it.
        changed = session.execute(text(
            "UPDATE exchanges SET reply = 'Melanie paints and does pottery every weekend.' WHERE id = "
            "(SELECT min(id) FROM exchanges WHERE user_id = 'side') RETURNING id")).scalar_one()
        after = _hits(session, QUESTION, False)
        session.rollback()
    assert before and after
    assert not any(aside for _, aside in sent)  # every statement on the test's own connection
    assert any(VECTOR_ARM in statement for statement, _ in sent)
    shown = {hit["meta"].get("reply") for hit in after if hit["id"] == changed}
    assert shown <= {"Melanie paints and does pottery every weekend."}  # what this transaction wrote, if shown


def test_a_failing_second_connection_falls_back_to_the_arms_inline(db_engine, monkeypatch, caplog):
    _import(make_sessionmaker(db_engine), "side")
    with Session(db_engine) as session:
        expected = _hits(session, QUESTION, False)

    def broken(self, vector, found):  # type: ignore[no-untyped-def]
        raise ConnectionError("the pool is exhausted")

    monkeypatch.setattr(sidearms.ExchangeArms, "_run", broken)
    with Session(db_engine) as session:
        assert _hits(session, QUESTION, False) == expected
    assert "running them inline" in caplog.text


def test_recall_takes_the_side_ids_without_waiting_for_the_side_transaction_to_end(db_engine, monkeypatch):
    _import(make_sessionmaker(db_engine), "side")
    with Session(db_engine) as session:
        expected = _hits(session, QUESTION, False)
    order: list[str] = []
    recalled = threading.Event()
    rollback = Connection.rollback

    def held_rollback(self):  # type: ignore[no-untyped-def]
        if threading.current_thread().name.startswith("recall-side"):
            recalled.wait(timeout=10)  # only a deadlock breaker: a recall waiting for this rollback never returns
            order.append("side rolled back")
        return rollback(self)

    monkeypatch.setattr(Connection, "rollback", held_rollback)
    with Session(db_engine) as session:
        hits = _hits(session, QUESTION, False)
        order.append("recall returned")
        recalled.set()
    for _ in range(100):  # the side thread rolls back once released
        if len(order) == 2:
            break
        threading.Event().wait(0.05)
    assert hits == expected
    assert order == ["recall returned", "side rolled back"]


def test_a_snapshot_transaction_keeps_its_arms_on_its_own_connection(db_engine):
    _import(make_sessionmaker(db_engine), "side")
    with Session(db_engine) as session:
        expected = _hits(session, QUESTION, False)
    sent = _watch(db_engine)
    with Session(db_engine) as session:
        # REPEATABLE READ reads one snapshot: another connection would see what was committed since.
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        assert _hits(session, QUESTION, False) == expected
    assert sent and not any(aside for _, aside in sent)


class _Dbapi:
    def rollback(self) -> None: ...

    def close(self) -> None: ...


def test_no_second_connection_when_the_pool_would_make_recall_wait():
    pool = QueuePool(_Dbapi, pool_size=1, max_overflow=0)
    assert sidearms._spare(pool)
    held = pool.connect()  # recall's own connection: the only one
    assert not sidearms._spare(pool)  # a checkout would wait for the pool's timeout
    held.close()
    assert sidearms._spare(pool)
    assert sidearms._spare(QueuePool(_Dbapi, pool_size=1, max_overflow=-1))  # no limit
    assert not sidearms._spare(StaticPool(_Dbapi))  # one connection shared by every checkout


class _WaitingEmbedder(PastimeEmbedder):
    """Embeds only once the second connection has sent its search settings (or after a timeout): tells whether
    that connection was made ready while the model still ran."""

    def __init__(self, settings_sent: threading.Event) -> None:
        super().__init__(cache_size=0)
        self.settings_sent, self.ready_while_embedding = settings_sent, []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.ready_while_embedding.append(self.settings_sent.wait(timeout=3))
        return super()._encode(texts)


def test_the_second_connection_is_made_ready_while_the_model_embeds_the_query(db_engine):
    _import(make_sessionmaker(db_engine), "side")
    with Session(db_engine) as session:
        expected = _hits(session, "Which museum hall did they visit?", False)
    settings_sent, recall_thread = threading.Event(), threading.get_ident()

    def seen(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if threading.get_ident() != recall_thread and "set_config" in statement:
            settings_sent.set()

    event.listen(db_engine, "before_cursor_execute", seen)
    embedder = _WaitingEmbedder(settings_sent)
    try:
        with Session(db_engine) as session:
            hits = recall(session, embedder, "side", "Which museum hall did they visit?", k=6, now=NOW,
                          reinforce=False)
    finally:
        event.remove(db_engine, "before_cursor_execute", seen)
    assert embedder.ready_while_embedding == [True]  # its checkout and settings did not wait for the vector
    assert [hit.to_dict() for hit in hits] == expected


def _enrich(sessions) -> None:  # type: ignore[no-untyped-def]
    """Facts and an episode about Melanie's pastimes beside the turns (what enrichment writes)."""
    embedder = PastimeEmbedder(cache_size=0)
    with sessions() as session:
        remember_fact(session, embedder, "side", "Melanie enjoys painting and pottery as pastimes",
                      embedding=embedder.embed(QUESTION))
        remember_fact(session, embedder, "side", "Melanie visited the museum's sculpture hall in April 2025")
        session.add(Episode(user_id="side", session_id="s1", title="Melanie's pastimes", gist="Pastimes Melanie enjoys",
                            summary="Melanie talked about the pastimes she enjoys.", salience=0.9, exchange_ids=[],
                            embedding=embedder.embed(QUESTION), ended_at=NOW))
        session.commit()


def _kinds(hits: dict[str, list[dict]]) -> set[str]:
    return {hit["kind"] for found in hits.values() for hit in found}


@pytest.mark.parametrize("embedded", [False, True])
def test_facts_and_episodes_gathered_on_the_second_connection_are_those_gathered_inline(db_engine, monkeypatch,
                                                                                        embedded):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "side")
    _enrich(sessions)
    inline, beside, sent = _inline_and_beside(db_engine, monkeypatch, embedded)
    assert {"fact", "episode", "exchange"} <= _kinds(inline) and beside == inline
    for table in OTHER_KINDS:  # each kind's candidates asked once a recall, on the other thread's connection only
        assert len([1 for statement, aside in sent if aside and table in statement]) == len(QUERIES)
        assert not any(table in statement for statement, aside in sent if not aside)


def test_failing_fact_and_episode_candidates_on_the_second_connection_are_gathered_inline(db_engine, monkeypatch,
                                                                                         caplog):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "side")
    _enrich(sessions)
    with Session(db_engine) as session:
        expected = _hits(session, QUESTION, False)
    assert {"fact", "episode"} <= {hit["kind"] for hit in expected}

    def broken(self, connection, qvec):  # type: ignore[no-untyped-def]
        raise ConnectionError("the server closed the connection")

    monkeypatch.setattr(sidearms.ExchangeArms, "_gather_others", broken)
    sent = _watch(db_engine)
    with Session(db_engine) as session:
        assert _hits(session, QUESTION, False) == expected
    assert "gathering them inline" in caplog.text
    assert all(any(table in statement for statement, aside in sent if not aside) for table in OTHER_KINDS)


def test_a_recall_failing_before_its_terms_frees_the_second_connection(db_engine, monkeypatch):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "side")
    _enrich(sessions)
    started: list[sidearms.ExchangeArms] = []
    original = sidearms.ExchangeArms.follow

    def follow(self, embedding):  # type: ignore[no-untyped-def]
        started.append(self)
        original(self, embedding)

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("the terms' statement failed")

    monkeypatch.setattr(sidearms.ExchangeArms, "follow", follow)
    monkeypatch.setattr("services.memory.recall.expanded_terms", broken)
    monkeypatch.setattr("services.memory.recall.line_terms", broken)
    with Session(db_engine) as session, pytest.raises(RuntimeError):
        _hits(session, QUESTION, True)
    assert started
    # Its connection no longer waits for terms (up to TERMS_WAIT_S): the second connection's work ends at once.
    assert started[0]._others_found.exception(timeout=2) is None and started[0]._others_found.result() is None
