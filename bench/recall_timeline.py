"""When each statement of a recall starts and ends, on which connection: the critical path, query by query.

Run from the repository root, on a database bench/recall.py built (``--pgdata``):
    python -m bench.recall timeline --pgdata DIR [--mode embed|given] [--queries 200] [--by-kind]
Another tree (one without this file): ``cd TREE && PYTHONPATH=TREE python PATH/TO/bench/recall_timeline.py ...``.

Recalls the 200 queries of bench/recall.py once each (warmed up and gc-frozen as a worker is) and prints, per part,
the median of when it started and ended (ms from the recall's start) and its duration's p50 / p95, in order of start:
each SQL statement by the memory function that sent it (``bench.recall_profile``'s labels; the second connection's
search settings and arms apart), the wait for the query vector, the expansion's nearest words (``_nearest``) and
recall's wait for the exchange arms' ids (``sidearms.ids``). What ``--profile`` sums, this places in time: which
statement waits for which. ``--by-kind``: the same table for each kind of query apart (naming a speaker, with a
time window, of common words only, the rest; a query of two kinds is counted in each).
rsql, one run each (load ~3), base → rsql, medians from the recall's start (ms): the vector
12.3 → 13.3, the arms' statement 18.1 → 13.3 (the settings 15.6 → 7.3), the BM25 arm apart in 181 → 92 of 200 recalls
and done 25.6 → 23.8, window_rows started 27.5 → 21.5, the wait for the arms' ids p95 8.4 → 3.9. Where a tree makes
the expansion in the process (rexp), its words and pgvector's cosines appear as two parts of their own.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import event

from bench.recall import USER, latency_queries
from bench.recall_profile import _caller

Event = tuple[str, float, float]  # (part, started, ended), ms from the recall's start


class Timeline:
    """Every statement on ``engine`` and every wrapped function, timed from ``begin()``."""

    def __init__(self, engine: Any) -> None:
        self.origin = 0.0
        self.events: list[Event] = []
        self._open: dict[int, list[tuple[str, float]]] = defaultdict(list)
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def begin(self) -> None:
        self.events, self.origin = [], time.perf_counter()

    def ms(self, moment: float) -> float:
        """``moment`` (a perf_counter reading) in ms from the recall's start."""
        return (moment - self.origin) * 1000

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        label = _caller()
        if label.startswith("sidearms."):
            label += " (settings)" if statement.startswith("SELECT set_config") else " (arms)"
        self._open[threading.get_ident()].append((label, time.perf_counter()))

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        label, started = self._open[threading.get_ident()].pop()
        self.events.append((label, self.ms(started), self.ms(time.perf_counter())))

    def wrap(self, owner: Any, name: str, label: str) -> None:
        """Time every call of ``owner.name`` as the part ``label``."""
        function: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.events.append((label, self.ms(started), self.ms(time.perf_counter())))

        setattr(owner, name, timed)


def query_kinds(session: Any, queries: list[str], now: Any) -> list[list[str]]:
    """Each query's kinds: "named" (it names one speaker), "window" (a time window), "common" (every asked word it
    finds is common), or "rest" when none of these."""
    from services.memory import lineterms, speakers
    from services.memory.config import RecallConfig
    from services.memory.timewords import time_window

    kinds = []
    for query in queries:
        found = []
        if speakers.named_speaker(session, USER, query):
            found.append("named")
        if time_window(query, now) is not None:
            found.append("window")
        if lineterms.line_terms(session, USER, query, RecallConfig()).common:
            found.append("common")
        kinds.append(found or ["rest"])
    session.rollback()
    return kinds


def run(url: str, mode: str, count: int, by_kind: bool = False) -> None:
    from services.db import make_engine, make_sessionmaker
    from services.embeddings import for_requests, load_embedder
    from services.memory import lineterms, recall, sidearms, vocabmatrix
    from services.memory.config import MemoryConfig

    engine = make_engine(url, pool_size=2)
    sessions = make_sessionmaker(engine)
    embedder = load_embedder("auto", cache_size=0)
    timeline = Timeline(engine)
    timeline.wrap(recall, "_query_vectors", "wait for the vector")
    timeline.wrap(lineterms, "_nearest", "expansion's nearest words")
    if hasattr(vocabmatrix.Matrices, "expansion"):  # rexp: the expansion's words and cosines in the process
        timeline.wrap(vocabmatrix.Matrices, "expansion", "expansion's words (kept vectors)")
        timeline.wrap(vocabmatrix.Matrix, "expansion", "expansion's cosines (kept vectors)")
    timeline.wrap(sidearms.ExchangeArms, "ids", "wait for the arms' ids")
    queries, config = latency_queries(count), MemoryConfig()
    parts: dict[str, list[tuple[float, float]]] = defaultdict(list)
    totals = []
    per_query: list[dict[str, list[tuple[float, float]]]] = []
    with sessions() as session:
        kinds = query_kinds(session, queries, dt.datetime.now(dt.UTC)) if by_kind else []
        for query in queries[:10]:
            recall.recall(session, embedder, USER, query, config=config, reinforce=False)
        gc.collect()
        gc.freeze()
        asked = for_requests(embedder)
        for query in queries:
            vector = asked.embed(query) if mode == "given" else None
            timeline.begin()
            recall.recall(session, embedder, USER, query, k=10, config=config, reinforce=False, query_embedding=vector)
            totals.append(timeline.ms(time.perf_counter()))
            own: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for label, started, ended in timeline.events:
                parts[label].append((started, ended))
                own[label].append((started, ended))
            per_query.append(own)
    engine.dispose()
    print_timeline(parts, totals, mode)
    for kind in ("named", "window", "common", "rest") if by_kind else ():
        chosen = [i for i, found in enumerate(kinds) if kind in found]
        merged: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for i in chosen:
            for label, spans in per_query[i].items():
                merged[label] += spans
        print(f"\n{kind}: {len(chosen)} queries")
        print_timeline(merged, [totals[i] for i in chosen], mode)


def print_timeline(parts: dict[str, list[tuple[float, float]]], totals: list[float], mode: str) -> None:
    print(f"recall ({mode}) over {len(totals)} queries: p50 {np.median(totals):.1f}  p95 "
          f"{np.percentile(totals, 95):.1f} ms")
    print(f"{'part':<38} {'times':>5} {'start':>7} {'end':>7} {'dur p50':>8} {'dur p95':>8}   (ms, medians)")
    for label, spans in sorted(parts.items(), key=lambda item: np.median([s for s, _ in item[1]])):
        values = np.array(spans)
        took = values[:, 1] - values[:, 0]
        print(f"{label:<38} {len(values):>5} {np.median(values[:, 0]):>7.2f} {np.median(values[:, 1]):>7.2f} "
              f"{np.median(took):>8.2f} {np.percentile(took, 95):>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pgdata", required=True, help="a database bench/recall.py built")
    parser.add_argument("--mode", default="embed", choices=["embed", "given"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--by-kind", action="store_true", help="also a table for each kind of query")
    args = parser.parse_args()
    pgdata = Path(args.pgdata)
    # Checked here, not with bench.recall.built_database: this file also runs against older trees.
    if not (pgdata / "bench-import.json").is_file():
        parser.error(f"--pgdata {pgdata}: not a database bench/recall.py built (no bench-import.json)")
    from services.embedded.lifecycle import free_port
    from services.embedded.postgres import EmbeddedPostgres

    server = EmbeddedPostgres(pgdata, port=free_port())
    server.start()
    try:
        run(server.url, args.mode, args.queries, args.by_kind)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
