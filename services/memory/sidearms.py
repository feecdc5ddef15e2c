"""Recall's exchange arms (the vector kNN and a time window's nearest exchanges) on a second connection.

Both need only the query vector, not the query's terms (as does a named speaker's arm, which runs with them:
``speaker_ids``): once the vector is there they run on another pooled connection while recall's own connection
counts the terms (and runs the BM25 arm); window_rows then gets their ids as an array instead of running them
itself. While recall embeds the query, that connection is checked out and its search settings sent meanwhile
(``ExchangeArms.follow``): only the arms' statement waits for the vector, and its ids reach recall before the
read-only transaction ends. The same statements with the same search settings, so the same ids: only the wall time
differs (the HNSW scan, ~2–10 ms at 100k exchanges, and a month's exact distances, ~4 ms, overlap the terms'
statements).

Only for a READ COMMITTED transaction that has written nothing yet (``OWN_CONNECTION_SQL``): another connection sees
what is committed, which is then all that recall's own connection sees too; and only when the pool has a connection
to spare without waiting (a second connection must never hold a recall up). Any failure on the side connection (the
server gone, a broken connection) falls back to the arms inside window_rows.

This module is the one way memory reads beside a turn's own connection: ``side_pool`` (the process's threads for
them) and ``side_engine`` (a second connection only when one is spare) serve recall's arms and query embedding and
context assembly's personal read alike.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool, Pool, QueuePool

from services.memory import search, speakers
from services.memory.config import RecallConfig
from services.memory.search import Candidate
from services.memory.speakers import NamedSpeaker
from services.memory.timewords import Window

log = logging.getLogger(__name__)
IDS_SQL = "SELECT unnest(CAST(:exchange_ids AS bigint[]))"  # the arms' ids as window_rows reads them
_SETTINGS_SQL = f"SELECT {search.SEARCH_SETTINGS_SQL}"
# How long the second connection waits for the terms before giving the other kinds back to recall's connection: a
# guard only (recall hands them over, or releases the wait, within the recall).
TERMS_WAIT_S = 10.0


_THREADS: dict[int, ThreadPoolExecutor] = {}  # by process id: created on first use, and again in a fork


def side_pool() -> ThreadPoolExecutor:
    """The threads of this process for work beside a turn's own connection (recall's query embedding and exchange
    arms, context assembly's personal read)."""
    pool = _THREADS.get(os.getpid())
    if pool is None:  # a forked child inherits the pool object but not its threads
        _THREADS.clear()
        pool = _THREADS[os.getpid()] = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-side")
    return pool


class ExchangeArms:
    """The exchange arms of one recall on a thread of ``pool``: started with the query vector (``start``) or while
    it is computed (``follow``); then the candidates of the ``others`` kinds (facts, episodes), once the terms are
    handed over (``hand_terms``)."""

    def __init__(self, engine: Engine, pool: ThreadPoolExecutor, user_id: str, window: Window | None,
                 cfg: RecallConfig, others: tuple[str, ...] = ()) -> None:
        self.engine, self.pool, self.user_id, self.window, self.cfg = engine, pool, user_id, window, cfg
        self.others = others
        self.future: Future[list[int]] | None = None
        self._speaker_found: list[int] | None = None  # the speaker arm's lines, when it ran here (set before future)
        self._terms: Future[search.Terms | None] = Future()
        self._others_found: Future[list[Candidate] | None] = Future()

    def start(self, qvec: np.ndarray | None) -> None:
        if qvec is not None and self.future is None:
            self.future = Future()
            self.pool.submit(self._fill, lambda: (qvec, None), self.future)

    def follow(self, embedding: Future[tuple[np.ndarray, Any]]) -> None:
        """Start now, while ``embedding`` (the query's vectors under way, the search vector first) is computed: the
        second connection's checkout, transaction and search settings need no vector, so only the arms' statement
        waits for it. (Started once the vector was there, the arms' first statement went out ~3 ms later at 100k
        exchanges: the checkout and the settings' round trip, each waiting for the GIL while recall's own thread
        ran Python.)"""
        if self.future is None:
            self.future = Future()
            # ``embedding`` went into the same pool before this task: a pool takes its tasks in order, so the embedding
            # runs (or ran) when this one waits for it, however many recalls share the pool.
            self.pool.submit(self._fill, embedding.result, self.future)

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

    def speaker_ids(self) -> list[int] | None:
        """The speaker arm's line ids (``speakers.speaker_lines_sql``, run beside the exchange arms for the
        speaker the embedding was made for), or None: run it inline (``ids`` tells of a failure)."""
        if self.future is None or self.future.exception() is not None:
            return None
        return self._speaker_found

    def hand_terms(self, terms: search.Terms | None) -> None:
        """The query's terms, for the other kinds' candidates (None: recall gathers none of them here)."""
        if not self._terms.done():
            self._terms.set_result(terms)

    def release(self) -> None:
        """End any wait for the terms (recall ends, or failed before handing them over)."""
        self.hand_terms(None)

    def other_candidates(self) -> list[Candidate] | None:
        """The ``others`` kinds' candidates, in their order, or None: gather them on recall's own connection."""
        if self.future is None or not self.others or not self._terms.done():
            return None
        try:
            return self._others_found.result()
        except Exception:  # noqa: BLE001 — any failure: the same statements inline
            log.warning("recall: the fact and episode candidates on a second connection failed; gathering them "
                        "inline", exc_info=True)
            return None

    def _fill(self, vector: Callable[[], tuple[np.ndarray, NamedSpeaker | None]], found: Future[list[int]]) -> None:
        """``_run``, its failure handed to ``ids`` and ``other_candidates`` (which then run their statements
        inline): both are always set."""
        try:
            self._run(vector, found)
        except Exception as error:  # noqa: BLE001
            unset = [future for future in (found, self._others_found) if not future.done()]
            for future in unset:
                future.set_exception(error)
            if not unset:  # everything was handed over; only ending the read-only transaction failed
                log.warning("recall: ending the exchange arms' transaction failed", exc_info=True)

    def _run(self, vector: Callable[[], tuple[np.ndarray, NamedSpeaker | None]], found: Future[list[int]]) -> None:
        """The arms' ids into ``found`` (searched by ``vector()``'s search vector, which may wait for the embedding;
        with its named speaker, that speaker's arm too); their read-only transaction ends after that, off recall's
        wait."""
        with self.engine.connect() as connection:
            try:
                connection.execute(search.statement(_SETTINGS_SQL), search.search_settings(self.cfg))
                qvec, speaker = vector()
                params: dict[str, Any] = {"user": self.user_id, "limit": self.cfg.candidates, "qvec": qvec}
                arms = [f"(SELECT id, FALSE FROM ({arm}) a)" for arm in arms_sql(qvec, self.window, self.cfg, params)]
                by_speaker = speakers.searches_turns(speaker, self.cfg)
                if by_speaker:  # as spans.gather would run it inside window_rows
                    arms.append(f"(SELECT id, TRUE FROM ({speakers.speaker_lines_sql()}) s)")
                    params.update(spk_name=speaker.name, spk_vec=speaker.vector,
                                  spk_limit=self.cfg.speaker_candidates)
                rows = connection.execute(search.statement(" UNION ALL ".join(arms), True, by_speaker), params).all()
                if by_speaker:
                    self._speaker_found = [line for line, of_speaker in rows if of_speaker]
                found.set_result([exchange for exchange, of_speaker in rows if not of_speaker])
                self._others_found.set_result(self._gather_others(connection, qvec))
            finally:
                connection.rollback()

    def _gather_others(self, connection: Connection, qvec: np.ndarray) -> list[Candidate] | None:
        """The other kinds' candidates, once recall hands over the terms (None when it hands none)."""
        if not self.others:
            return None
        terms = self._terms.result(timeout=TERMS_WAIT_S)
        if terms is None:
            return None
        return [candidate for kind in self.others for candidate in search.kind_candidates(
            connection, kind, self.user_id, qvec, terms, self.window, self.cfg.candidates, self.cfg)]


def arms_sql(qvec: np.ndarray | None, window: Window | None, cfg: RecallConfig, params: dict[str, Any],
             terms: search.Terms | None = None) -> list[str]:
    """The exchange arms' statements (``:user``, ``:limit``; the window arm's values go into ``params``)."""
    arms = []
    if qvec is not None:
        arms.append(search.vector_sql("exchange", exact_lines=cfg.exact_lines))
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
