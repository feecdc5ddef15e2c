"""Forgetting does not wait for the vector backfill: a person's "forget everything" returns while a backfill
batch holding their exchanges is still in the model, and nothing forgotten comes back when it finishes (no row,
no line, no vector); everyone else's vectors are written as if nothing happened."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import Exchange, make_sessionmaker
from services.memory.forget import forget_user, purge_rows
from services.memory.vectors import DEFERRED, fill_all, pending_count
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange, create_thread
from tests.test_vector_backfill import _import

pytestmark = pytest.mark.integration

GUARD_S = 60  # a failure guard only: every wait below ends on an event, not on time


class NeverReleased(BaseException):
    """The model was never let go: not an embedding failure the backfill may absorb."""


class HeldEmbedder(HashEmbedder):
    """A model that, once, stops in the middle of a batch until the test lets it go."""

    def __init__(self) -> None:
        super().__init__(cache_size=0)
        self.inside, self.go = threading.Event(), threading.Event()

    def _encode(self, texts):  # type: ignore[no-untyped-def]
        self.inside.set()
        if not self.go.wait(GUARD_S):
            raise NeverReleased("the test never released the model")
        return super()._encode(texts)


def _in_thread(target: Callable[[], object]) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = target()
        except BaseException as exc:  # noqa: BLE001 — reported by the test, not lost in the thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _chat_turn(sessions, user: str, said: str) -> int:  # type: ignore[no-untyped-def]
    """A chat turn stored lean (no lines, no vector): the backfill derives its lines when it claims it."""
    with sessions.begin() as session:
        thread_id = create_thread(session, user_id=user)
        exchange = Exchange(request_id=f"lean-{user}-{said[:8]}", user_id=user, thread_id=thread_id, user_text=said,
                            reply="Noted.", mode="RESPOND", embedding_model=DEFERRED, tool_trail=[], timings={})
        session.add(exchange)
        session.flush()
        return int(exchange.id)


def _left_of(session: Session, user: str) -> dict[str, int]:
    counts = {table: int(session.scalar(text(f"SELECT count(*) FROM {table} WHERE user_id = :u"), {"u": user}) or 0)
              for table in ("exchanges", "exchange_lines", "threads", "vocabulary")}
    counts["users"] = int(session.scalar(text("SELECT count(*) FROM users WHERE id = :u"), {"u": user}) or 0)
    return counts


def _assert_embedded_as_inline(session: Session, user: str) -> None:
    rows = session.execute(text("SELECT user_text, reply, embedding FROM exchanges WHERE user_id = :u"),
                           {"u": user}).all()
    assert rows and all(row.embedding is not None for row in rows)
    named = session.scalar(text("SELECT count(*) FROM exchange_lines WHERE user_id = :u AND speaker NOT IN "
                                "('user', 'assistant') AND embedding IS NULL"), {"u": user})
    assert named == 0  # every named speaker's line has its vector, as an inline import stores it


def test_forget_everything_returns_while_the_backfill_embeds_and_nothing_forgotten_comes_back(db_engine):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "forget-me", 24)  # named speakers and roles: exchange and line vectors
    _chat_turn(sessions, "forget-me", "My locker code is 4711")  # lean: its lines are derived by the claim
    kept = _import(sessions, "keeper", 24)
    embedder = HeldEmbedder()
    # The first batch is all theirs (the oldest rows); the keeper's come in the next one, which must still run.
    backfill, filled = _in_thread(lambda: fill_all(sessions, embedder, limit=13))
    assert embedder.inside.wait(GUARD_S), "the backfill never reached the model"

    purge, purged = _in_thread(lambda: forget_user(sessions, None, "forget-me"))
    purge.join(GUARD_S)
    try:
        # The order is the point: the purge is done while the model still holds the batch.
        assert not purge.is_alive(), "forget everything waited for the backfill's embedding"
        assert not embedder.go.is_set() and backfill.is_alive()
    finally:
        embedder.go.set()
        backfill.join(GUARD_S)
        purge.join(GUARD_S)
    assert "error" not in purged and "error" not in filled, (purged, filled)
    assert purged["result"].rows["exchanges"] == 13  # type: ignore[attr-defined]
    assert filled["result"] == kept  # only the keeper's rows were written
    with Session(db_engine) as session:
        assert set(_left_of(session, "forget-me").values()) == {0}  # nothing of theirs came back
        assert pending_count(session) == 0
        _assert_embedded_as_inline(session, "keeper")


def test_a_purge_under_way_when_the_batch_is_written_is_not_waited_for_and_rolled_back_loses_nothing(db_engine):
    # The backfill never waits for a purge under way (it holds other rows meanwhile: a wait could deadlock with the
    # purge, which deletes lines and their counts before exchanges); it leaves that person's rows out whole.
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "forget-me", 24)
    kept = _import(sessions, "keeper", 24)
    embedder = HeldEmbedder()
    backfill, filled = _in_thread(lambda: fill_all(sessions, embedder, limit=1000))
    assert embedder.inside.wait(GUARD_S)
    deleted, undo = threading.Event(), threading.Event()

    def purge_that_fails() -> None:
        with Session(db_engine) as purge:
            assert purge_rows(purge, "forget-me")["exchanges"] == 12
            deleted.set()
            undo.wait(GUARD_S)
            purge.rollback()  # the purge failed: its rows are still there, still without a vector

    purge, purged = _in_thread(purge_that_fails)
    try:
        assert deleted.wait(GUARD_S), "the purge's deletes waited for the backfill's embedding"
        embedder.go.set()
        backfill.join(GUARD_S)
        assert not backfill.is_alive() and not undo.is_set(), "the backfill waited for an uncommitted purge"
    finally:
        embedder.go.set()
        undo.set()
        backfill.join(GUARD_S)
        purge.join(GUARD_S)
    assert "error" not in filled and "error" not in purged, (filled, purged)
    assert filled["result"] == kept
    with Session(db_engine) as session:
        assert pending_count(session) == 12
    assert fill_all(sessions, HashEmbedder(cache_size=0)) == 12  # the next run fills them
    with Session(db_engine) as session:
        _assert_embedded_as_inline(session, "forget-me")
        _assert_embedded_as_inline(session, "keeper")


def _delete(db_engine, exchange_id: int) -> None:  # type: ignore[no-untyped-def]
    with Session(db_engine) as session, session.begin():
        session.execute(text("DELETE FROM exchanges WHERE id = :id"), {"id": exchange_id})


def test_an_exchange_forgotten_while_embedded_is_not_written_and_its_neighbours_are(db_engine):
    # The forget skill deletes single exchanges (their lines by cascade: exchanges before lines).
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "alice", 24)
    with Session(db_engine) as session, session.begin():
        gone = session.scalar(text("SELECT min(id) FROM exchanges"))
        create_exchange(session, user_id="alice", user_text="already embedded", embedder=HashEmbedder())
    embedder = HeldEmbedder()
    backfill, filled = _in_thread(lambda: fill_all(sessions, embedder, limit=1000))
    assert embedder.inside.wait(GUARD_S)
    forget, forgot = _in_thread(lambda: _delete(db_engine, gone))
    forget.join(GUARD_S)
    try:
        assert not forget.is_alive(), "forgetting one exchange waited for the backfill's embedding"
    finally:
        embedder.go.set()
        backfill.join(GUARD_S)
        forget.join(GUARD_S)
    assert "error" not in forgot and "error" not in filled and filled["result"] == 11, (forgot, filled)
    with Session(db_engine) as session:
        assert session.scalar(text("SELECT count(*) FROM exchanges WHERE id = :id"), {"id": gone}) == 0
        assert session.scalar(text("SELECT count(*) FROM exchange_lines WHERE exchange_id = :id"), {"id": gone}) == 0
        assert pending_count(session) == 0
        vectors = session.scalars(text("SELECT embedding IS NOT NULL FROM exchanges WHERE user_id = 'alice'")).all()
    assert vectors == [True] * 12  # the 11 others and the one embedded before
