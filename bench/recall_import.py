"""bench.recall's database: the synthetic history imported as ``engram import --no-enrich`` does, then its vectors
and words filled as the backfill job does, each step timed; and the checks of a database built by older code."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from sqlalchemy import text

from services.memory import vocabulary
from services.memory.importer import store_records
from services.memory.vectors import fill_all

USER = "bench"


class TimedEmbedder:
    """The embedder, with the time spent in it counted (to tell embedding from storage in the import rate)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.seconds = inner, 0.0
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed(self, text: str) -> np.ndarray:
        started = time.monotonic()
        try:
            return self.inner.embed(text)
        finally:
            self.seconds += time.monotonic() - started

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        started = time.monotonic()
        try:
            return self.inner.embed_many(texts, batch_size=batch_size)
        finally:
            self.seconds += time.monotonic() - started


def import_records(sessions, embedder, records, batch_size: int,  # type: ignore[no-untyped-def]
                   embed_now: bool = False) -> dict[str, float]:
    """Import through store_records (as ``engram import --no-enrich``: no vectors), then run the vector backfill
    to completion (the job's function, a thread per core), each timed on its own."""
    timed = TimedEmbedder(embedder)
    started = time.monotonic()
    report = store_records(sessions, timed, USER, records, batch_size=batch_size, embed=embed_now)
    stored_s = time.monotonic() - started
    started = time.monotonic()
    vectors = fill_all(sessions, timed, limit=batch_size, loops=os.cpu_count() or 1)  # as the job runs it
    vectors_s, started = time.monotonic() - started, time.monotonic()
    words = vocabulary.fill_all(sessions, timed)  # then the person's words, as the job runs it
    return {"stored": report.stored, "seconds": stored_s, "vectors": vectors, "vectors_s": vectors_s,
            "words": words, "words_s": time.monotonic() - started, "embedding_s": timed.seconds,
            "embed_now": embed_now}


def fill_vocabulary(sessions, embedder) -> None:  # type: ignore[no-untyped-def]
    """Fill the vocabulary of a database built before it existed (migration 0013), as the backfill job would."""
    with sessions() as session:
        if not vocabulary.pending(session):
            return
    started = time.monotonic()
    words = vocabulary.fill_all(sessions, embedder)
    print(f"vocabulary: {words} words embedded in {time.monotonic() - started:.1f} s (built before migration 0013)")


def print_import(stats: dict[str, float], embedder, batch_size: int, reused: str = "") -> None:  # type: ignore[no-untyped-def]
    n, s = stats["stored"], stats["seconds"]
    if "vectors" not in stats:  # a database built by the code before the backfill: embedded inline
        print(f"import{reused}: {n:.0f} exchanges in {s:.1f} s = {n / s:.0f} exchanges/s, embedded inline "
              f"(embedder {embedder.model_id}, load average at start {stats.get('load', '?')})")
        return
    v, vs = stats["vectors"], stats["vectors_s"]
    how = "embedded inline (--embed-now)" if stats.get("embed_now") else "no vectors yet"
    print(f"import{reused}: {n:.0f} exchanges stored in {s:.1f} s = {n / s:.0f} exchanges/s ({how}, batch "
          f"{batch_size}, --no-enrich; load average at start {stats.get('load', '?')}); then the vector backfill: "
          f"{v:.0f} exchanges in {vs:.1f} s = {v / max(vs, 1e-9):.0f} vectors/s (embedder {embedder.model_id}, "
          f"{stats['embedding_s']:.1f} s of thread time in the model)"
          + (f"; then the vocabulary: {stats['words']:.0f} words in {stats['words_s']:.1f} s" if "words" in stats
             else ""))


def rewrite_vectors(engine) -> None:  # type: ignore[no-untyped-def]
    """Rewrite the tables holding vectors, so that vectors stored out of line before migration 0012 (0017 for facts
    and episodes) move into their rows (minutes at 100k: every index is rebuilt, HNSW's too)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        for table in ("exchanges", "exchange_lines", "facts", "episodes"):
            started = time.monotonic()
            connection.execute(text(f"VACUUM (FULL, ANALYZE) {table}"))
            print(f"rewrote {table} in {time.monotonic() - started:.0f} s")


def out_of_line(sessions) -> None:  # type: ignore[no-untyped-def]
    """Say how many exchange vectors still live out of their rows (read through the TOAST index by every recall)."""
    with sessions() as session:
        outside, total = session.execute(text(
            "SELECT count(*) FILTER (WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL), count(embedding) "
            "FROM exchanges WHERE user_id = :u"), {"u": USER}).one()
    if outside:
        print(f"note: {outside} of {total} exchange vectors are stored out of line (written before migration "
              "0012): --rewrite moves them into their rows")


def built_database(parser: argparse.ArgumentParser, pgdata: str) -> Path:
    """``--pgdata`` as a database bench/recall.py built, or the parser's error (exit 2): a missing folder would be
    created as an empty database, every recall finding nothing and ``enrich`` enriching nothing."""
    path = Path(pgdata)
    if not (path / "bench-import.json").is_file():
        parser.error(f"--pgdata {path}: not a database bench/recall.py built (no bench-import.json)")
    return path
