"""Recall bench: import throughput, recall quality by fusion method, and recall latency.

Run from the repository root:  python -m bench.recall [--n 10000] [--queries 200] [--embedder onnx]

Starts a throwaway PostgreSQL (pgvector) under a temp dir, imports N synthetic exchanges plus the
conversation set of tests/data/memory_set.jsonl through the real import path (batched
embeddings, --no-enrich), then:
  * quality: recall@5 / recall@10 of the set's questions (tests/data/memory_questions.jsonl)
    among the N distractors, for vector-only, full-text-only, RRF, min-max and absolute fusion,
    with and without neighbouring turns;
  * latency: p50 / p95 of recall() including the query embedding (embedding cache off).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from services.db import make_engine, make_sessionmaker
from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embeddings import load_embedder
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.importer import Record, pair_exchanges, parse_lines, store_records
from services.memory.recall import recall
from services.migrate import upgrade_head

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
USER = "bench"
NAMES = ["Anna", "Ben", "Chloe", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kemal", "Lucia",
         "Marco", "Nadia", "Oskar", "Paula", "Quentin", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wim", "Yara"]
PLACES = ["Berlin", "Lyon", "Gdansk", "Seville", "Bristol", "Turin", "Ghent", "Bergen", "Brno", "Cork", "Graz",
          "the lake", "the office", "the gym", "the market", "the park", "the library", "my parents' place"]
THINGS = ["a new laptop", "the garden", "a sourdough starter", "the quarterly report", "a marathon", "the car",
          "a birthday party", "the dog", "a job interview", "the tax return", "a podcast", "the kitchen",
          "a wedding", "a book", "the tram pass", "a guitar", "the flat", "a vacation", "the bike", "a concert"]
ASKS = ["Can you help me plan {thing}?", "What's a good way to prepare for {thing}?", "{name} keeps talking about "
        "{thing}, any advice?", "I spent the afternoon on {thing} in {place}.", "Remind me why I wanted {thing}?",
        "Is it normal to feel tired after {thing}?", "{name} and I argued about {thing} again.",
        "I'm meeting {name} in {place} on {day}.", "Do you think {thing} is worth the money?",
        "What should I pack for a weekend in {place}?"]
REPLIES = ["That sounds {adj}. Maybe start with a small step today.", "Good question. Break it into parts first.",
           "I'd talk to {name} about it before deciding.", "Take it slowly; {thing} can wait a day.",
           "Write down what matters most, then decide.", "It's {adj} to feel that way."]
ADJS = ["exciting", "stressful", "normal", "reasonable", "lovely", "tricky"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


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


def synthetic(n: int, seed: int = 42) -> list[Record]:
    """N distractor exchanges in sessions of ~10, spread over two years before the question date."""
    rng = random.Random(seed)
    start = dt.datetime(2024, 11, 1, tzinfo=dt.UTC)
    records = []
    for i in range(n):
        slots = {"name": rng.choice(NAMES), "place": rng.choice(PLACES), "thing": rng.choice(THINGS),
                 "adj": rng.choice(ADJS), "day": rng.choice(DAYS)}
        session = f"syn-{i // 10}"
        at = start + dt.timedelta(minutes=(i // 10) * 1000 + (i % 10) * 3 + rng.random())
        records.append(Record(key=f"syn-{i}", thread_key=session, session_key=session,
                              user_text=rng.choice(ASKS).format(**slots), reply=rng.choice(REPLIES).format(**slots),
                              at=at))
    return records


METHODS = {
    "vector only": dict(fusion="absolute", lexical_weight=0.0, recency_weight=0, salience_weight=0,
                        time_match_weight=0, window_relevance=0),
    "full-text only (IDF)": dict(fusion="absolute", vector_weight=0.0, recency_weight=0, salience_weight=0,
                                 time_match_weight=0, window_relevance=0),
    "rrf": dict(fusion="rrf"),
    "minmax": dict(fusion="minmax"),
    "absolute (default)": dict(fusion="absolute"),
}


def quality(sessions, embedder, base: RecallConfig) -> None:  # type: ignore[no-untyped-def]
    questions = [json.loads(line) for line in (DATA / "memory_questions.jsonl").read_text().splitlines() if line]
    print(f"\nquality: {len(questions)} questions (tests/data/memory_questions.jsonl)")
    print(f"{'method':<24} {'neighbours':>10} {'recall@5':>9} {'recall@10':>10}")
    vectors = {q["question"]: embedder.embed(q["question"]) for q in questions}
    for name, changes in METHODS.items():
        for width in (0, 1):
            config = MemoryConfig(recall=replace(base, **changes, neighbours=width))
            scores = {5: 0, 10: 0}
            with sessions() as session:
                for item in questions:
                    now = dt.datetime.fromisoformat(item["now"].replace("Z", "+00:00"))
                    hits = recall(session, embedder, USER, item["question"], k=10, config=config, now=now,
                                  reinforce=False, kinds=("exchange",), query_embedding=vectors[item["question"]])
                    for k in scores:
                        if set(item["gold"]) & {e for hit in hits[:k] for e in hit.external_ids}:
                            scores[k] += 1
            print(f"{name:<24} {width:>10} {scores[5] / len(questions):>9.3f} {scores[10] / len(questions):>10.3f}")


def latency(sessions, embedder, count: int) -> None:  # type: ignore[no-untyped-def]
    questions = [json.loads(line)["question"] for line in (DATA / "memory_questions.jsonl").read_text().splitlines()
                 if line]
    rng = random.Random(1)
    queries = [rng.choice(questions) if i % 2 else rng.choice(ASKS).format(
        name=rng.choice(NAMES), place=rng.choice(PLACES), thing=rng.choice(THINGS), day=rng.choice(DAYS))
        for i in range(count)]
    config = MemoryConfig()
    samples, embed_ms = [], []
    with sessions() as session:
        for query in queries[:10]:  # warm-up
            recall(session, embedder, USER, query, config=config, reinforce=False)
        for query in queries:
            started = time.perf_counter()
            vector = embedder.embed(query + f" #{len(samples)}")  # a fresh text: no cache hit
            embedded = time.perf_counter()
            recall(session, embedder, USER, query, k=10, config=config, reinforce=False, query_embedding=vector)
            samples.append((time.perf_counter() - started) * 1000)
            embed_ms.append((embedded - started) * 1000)
    p50, p95, p99 = np.percentile(samples, [50, 95, 99])
    print(f"\nlatency over {count} queries, k=10, all kinds, embedding included: "
          f"p50 {p50:.1f} ms  p95 {p95:.1f} ms  p99 {p99:.1f} ms  (embedding alone p50 {np.median(embed_ms):.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="synthetic exchanges to import")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="auto", choices=["auto", "sentence-transformers", "onnx"])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--pgdata", help="keep the database here between runs (a re-run imports nothing twice)")
    args = parser.parse_args()
    embedder = load_embedder(args.embedder, cache_size=0)
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        server = EmbeddedPostgres(Path(args.pgdata or tmp), port=free_port())
        server.start()
        try:
            engine = make_engine(server.url, pool_size=2)
            upgrade_head(engine)
            sessions = make_sessionmaker(engine)
            lines, _, _ = parse_lines((DATA / "memory_set.jsonl").read_text().splitlines())
            records = synthetic(args.n) + pair_exchanges(lines)
            timed = TimedEmbedder(embedder)
            started = time.monotonic()
            report = store_records(sessions, timed, USER, records, batch_size=args.batch_size)
            elapsed = time.monotonic() - started
            # The importer embeds the next batch while it stores this one, so the two times overlap.
            print(f"import: {report.stored} exchanges in {elapsed:.1f} s = {report.stored / elapsed:.0f} exchanges/s "
                  f"(embedder {embedder.model_id}, batch {args.batch_size}, embeddings + HNSW + GIN indexing); "
                  f"embedding alone {timed.seconds:.1f} s = {report.stored / max(timed.seconds, 1e-9):.0f} "
                  "exchanges/s, overlapped with storing and indexing")
            with sessions.begin() as session:
                from sqlalchemy import text

                session.execute(text("ANALYZE"))
            quality(sessions, embedder, RecallConfig())
            latency(sessions, embedder, args.queries)
            engine.dispose()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
