"""The recall bench: memory's recall measured for quality and speed, in modes (run from the repository root).

    python -m bench.recall [--n 100000] [--queries 200] [--pgdata DIR] [--profile] [--explain]   # scale (default)
    python -m bench.recall locomo [--data DIR] [--ablate] [--enrich by-speaker] [--set key=value ...]

- ``scale`` (bench/recall/scale.py): N synthetic exchanges (bench/chatgen.py) imported through the real path, then
  recall@5/@10 of tests/data/memory_questions.jsonl among them by arm, and recall's latency (p50 / p95 / p99 with
  and without the query embedding, CPU per recall; ``--profile`` each statement's share).
- ``locomo`` (bench/recall/locomo.py): evidence recall within 5 / 10 / 20 turns on LoCoMo's real conversations,
  beside naive BM25 / vector / fused baselines on the same data; the figure the README quotes.

How to read the latency: a p95 on a shared box moves by a third from one hour to the next; compare trees by
alternating runs and give the load average printed with each figure. The rounds' history is in
bench/recall_rounds.md and bench/RESULTS.md (the paired mode those rounds used, ``pair``, and its ``enrich``, were
removed on 2026-11-30: ``git log --diff-filter=D -- bench/recall/pair.py`` finds them).

This module holds what the modes share: the database, the import, the latency line, the load average.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

USER = "bench"  # the person whose history ``scale`` builds
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def latency_line(ms: list[float], shares: tuple[int, ...] = (50, 95)) -> str:
    """``p50 12.3 ms  p95 45.6 ms``: the percentiles every mode prints of its latencies."""
    return "  ".join(f"p{share} {value:.1f} ms" for share, value in zip(shares, np.percentile(ms, shares),
                                                                          strict=True))


@contextmanager
def database(pgdata: str | Path | None) -> Iterator[tuple[Engine, sessionmaker[Session]]]:
    """An embedded PostgreSQL (pgvector) in a temp dir, or in ``pgdata`` kept between runs; its engine and sessions."""
    from services.db import make_engine, make_sessionmaker
    from services.embedded.lifecycle import free_port
    from services.embedded.postgres import EmbeddedPostgres
    from services.migrate import upgrade_head

    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        server = EmbeddedPostgres(Path(pgdata or tmp), port=free_port())
        server.start()
        try:
            engine = make_engine(server.url, pool_size=2)
            upgrade_head(engine)
            try:
                yield engine, make_sessionmaker(engine)
            finally:
                engine.dispose()
        finally:
            server.stop()


def import_history(sessions: sessionmaker[Session], embedder: Any, user: str, records: list[Any],
                   batch_size: int = 256, embed_now: bool = False) -> dict[str, float]:
    """Import as ``engram import --no-enrich`` does (store_records: no vectors unless ``embed_now``), then run the
    vector backfill and the person's vocabulary to completion as their jobs run them; each timed on its own."""
    from services.memory import vocabulary
    from services.memory.importer import store_records
    from services.memory.vectors import fill_all

    started = time.monotonic()
    report = store_records(sessions, embedder, user, records, batch_size=batch_size, embed=embed_now)
    stored_s, started = time.monotonic() - started, time.monotonic()
    vectors = fill_all(sessions, embedder, limit=batch_size, loops=os.cpu_count() or 1)  # a thread per core
    vectors_s, started = time.monotonic() - started, time.monotonic()
    words = vocabulary.fill_all(sessions, embedder)
    return {"stored": report.stored, "seconds": stored_s, "vectors": vectors, "vectors_s": vectors_s,
            "words": words, "words_s": time.monotonic() - started, "embed_now": embed_now}

