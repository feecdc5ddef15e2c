"""Recall's exchange arms (the vector kNN and a time window's nearest exchanges) on a second connection.

Both need only the query vector, not the query's terms: once the vector is there they run on another pooled
connection while recall's own connection counts the terms (and runs the BM25 arm); window_rows then gets their
ids as an array instead of running them itself. The same statements with the same search settings, so the same
ids: only the wall time differs (the HNSW scan, ~2–10 ms at 100k exchanges, and a month's exact distances,
~4 ms, overlap the terms' statements).

Only for a READ COMMITTED transaction that has written nothing yet (``OWN_CONNECTION_SQL``): another connection
sees what is committed, which is then all that recall's own connection sees too; and only when the pool has a
connection to spare without waiting (a second connection must never hold a recall up). Any failure on the side
connection (the server gone, a broken connection) falls back to the arms inside window_rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool, Pool, QueuePool

from services.memory import search
from services.memory.config import RecallConfig
from services.memory.timewords import Window

log = logging.getLogger(__name__)
IDS_SQL = "SELECT unnest(CAST(:exchange_ids AS bigint[]))"  # the arms' ids as window_rows reads them


class ExchangeArms:
    """The exchange arms of one recall, started on ``pool`` once the query vector is known."""

    def __init__(self, engine: Engine, pool: ThreadPoolExecutor, user_id: str, window: Window | None,
                 cfg: RecallConfig) -> None:
        self.engine, self.pool, self.user_id, self.window, self.cfg = engine, pool, user_id, window, cfg
        self.future: Future[list[int]] | None = None

    def start(self, qvec: np.ndarray | None) -> None:
        if qvec is not None and self.future is None:
            self.future = Future()
            self.pool.submit(self._deliver, qvec, self.future)

    def running(self) -> bool:
        return self.future is not None and not self.future.done()

    def ids(self) -> list[int] | None:
        """The arms' exchange ids (duplicates kept, as the inline arms give them), or None: run them inline."""
        if self.future is None:
            return None
        try:
            return self.future.result()
        except Exception:  # noqa: BLE001 — any failure: the same arms inline, on recall's own connection
            log.warning("recall: the exchange arms on a second connection failed; running them inline",
                        exc_info=True)
            return None

    def _deliver(self, qvec: np.ndarray, future: Future[list[int]]) -> None:
        """Run the arms, handing their ids to ``future`` as soon as they are read: the side transaction's end (a
        round trip, ~0.8 ms at p50 and up to ~7 at p95 on a busy machine) then runs while recall goes on."""
        try:
            self._run(qvec, future.set_result)
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)  # recall runs the arms inline (``ids``)
            elif isinstance(exc, Exception):  # the ids were handed over; only ending the transaction failed
                log.warning("recall: ending the exchange arms' transaction failed", exc_info=True)
            if not isinstance(exc, Exception):
                raise

    def _run(self, qvec: np.ndarray, hand_over: Callable[[list[int]], None]) -> None:
        params: dict[str, Any] = {"user": self.user_id, "limit": self.cfg.candidates, "qvec": qvec}
        sql = " UNION ALL ".join(f"({arm})" for arm in arms_sql(qvec, self.window, self.cfg, params))
        with self.engine.connect() as connection:
            connection.execute(text(f"SELECT {search.SEARCH_SETTINGS_SQL}"), search.search_settings(self.cfg))
            hand_over(list(connection.execute(search.statement(sql, True), params).scalars()))
            connection.rollback()


def arms_sql(qvec: np.ndarray | None, window: Window | None, cfg: RecallConfig, params: dict[str, Any],
             terms: search.Terms | None = None) -> list[str]:
    """The exchange arms' statements (``:user``, ``:limit``; the window arm's values go into ``params``)."""
    arms = []
    if qvec is not None:
        arms.append(search.vector_sql("exchange"))
    if window is not None:
        arms.append(search.window_sql("exchange", window, qvec, terms or search.Terms(), params))
    return arms


# True when the arms must stay on recall's own connection: its transaction has written (another connection would
# not see that) or reads from one snapshot (another connection would see later commits).
OWN_CONNECTION_SQL = ("(txid_current_if_assigned() IS NOT NULL "
                      "OR current_setting('transaction_isolation') <> 'read committed')")


def side_engine(session: Session, own_only: bool) -> Engine | None:
    """The engine to open a second connection from: None when the arms must stay on the session's connection
    (``own_only``, from OWN_CONNECTION_SQL), the session is bound to one connection, or its pool has no connection
    to spare right now (a checkout would wait, up to the pool's timeout)."""
    bind = session.get_bind()
    if own_only or not isinstance(bind, Engine):
        return None
    return bind if _spare(bind.pool) else None


def _spare(pool: Pool) -> bool:
    if isinstance(pool, NullPool):
        return True  # a new connection each time
    if not isinstance(pool, QueuePool):
        return False  # e.g. a StaticPool: one connection shared by every checkout
    limit = pool.size() + pool._max_overflow  # noqa: SLF001 — QueuePool exposes no public limit; -1 overflow: none
    return pool._max_overflow < 0 or pool.checkedout() < limit  # noqa: SLF001
