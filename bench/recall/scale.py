"""``python -m bench.recall [scale]``: recall at scale: import throughput, recall quality by arm, latency and profile.

    python -m bench.recall [--n 100000] [--queries 200] [--pgdata DIR] [--profile] [--explain]

Starts a throwaway PostgreSQL (pgvector) under a temp dir (or ``--pgdata DIR``, kept between runs)
and imports N exchanges of synthetic chat (``bench/chatgen.py``: sessions on drifting topics,
varied turn lengths, Zipfian vocabulary, named speakers in a third of the sessions) plus the
conversation set of tests/data/memory_set.jsonl through the real import path (parse_lines →
pair_exchanges → store_records: batched real embeddings, --no-enrich), then:
  * quality: recall@5 / recall@10 of the set's questions (tests/data/memory_questions.jsonl)
    among the N distractors, for vector-only, full-text-only and both arms fused (the default);
  * latency: p50 / p95 of recall() with the query embedding (recall embeds the query itself, as a
    caller without a vector does, the embedder caching nothing; its CPU and its backend's) and
    without it (then the same recall given the vector);
  * ``--profile``: the median and p95 of each part of the recall given the vector (each SQL
    statement by the function that sent it, the rest = Python; the embedding alone beside it),
    and statements per recall;
    ``--explain``: EXPLAIN (ANALYZE, BUFFERS) of every statement of one recall.
With ``--pgdata`` a database already holding the N exchanges is reused: the import line then
says so and repeats the rate measured when it was built (kept in DIR/bench-import.json);
``--no-import`` measures recall over whatever DIR holds, and says how many exchanges that is.
``--profile`` times every statement a recall sends with SQLAlchemy's cursor events; a statement is named by the
function of services/memory that sent it (the first frame of the call stack inside that package), so the table
reads "turns.line_terms 3.1 ms". Statements sent from another thread (``sidearms``: the exchange arms on a second
connection) are timed alike; they overlap the others (OVERLAPPED), so the Python part is the wall time less the
other statements only.
How to read it: bench/recall/__init__.py; the rounds' history is in bench/recall_rounds.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import random
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bench.chatgen import TOPICS, ChatGen, chat_lines
from bench.recall import DATA, USER, database, import_history, latency_line, load_average
from services.embeddings import BACKEND_NAMES, for_requests, load_embedder
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.importer import pair_exchanges, parse_lines
from services.memory.recall import recall

PACKAGE = "services/memory/"
OVERLAPPED = ("sidearms.",)  # labels of statements run beside the others, on another connection


def backend_cpu_ns(pid: int) -> int:
    """Nanoseconds a process of this machine (a PostgreSQL backend) has run on a CPU so far."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def _caller() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if PACKAGE in path and not (path.endswith("/recall.py") and frame.f_code.co_name == "recall"):
            return f"{path.rsplit('/', 1)[-1][:-3]}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "other"


class StatementTimer:
    """Times every statement on ``engine`` while active, by the memory function that sent it."""

    def __init__(self, engine: Engine) -> None:
        self.active = False
        self.current: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self.server_cpu: dict[str, float] = defaultdict(float)  # ms of the backend's CPU, over all recordings
        self.captured: list[tuple[str, str, Any]] = []  # (label, statement, parameters) of the last recall
        self._started: dict[int, list[tuple[str, float, int, int]]] = defaultdict(list)  # by thread
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if self.active:
            label = _caller()
            backend = conn.connection.driver_connection.info.backend_pid
            self._started[threading.get_ident()].append((label, time.perf_counter(), backend, backend_cpu_ns(backend)))
            self.captured.append((label, statement, parameters))

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        started_here = self._started[threading.get_ident()]
        if self.active and started_here:
            label, started, backend, cpu = started_here.pop()
            self.current[label] += (time.perf_counter() - started) * 1000
            self.server_cpu[label] += (backend_cpu_ns(backend) - cpu) / 1e6
            self.counts[label] += 1

    @contextmanager
    def recording(self) -> Iterator[None]:
        self.current, self.captured, self.active = defaultdict(float), [], True
        try:
            yield
        finally:
            self.active = False


def print_profile(rows: list[dict[str, float]], counts: dict[str, int], queries: int,
                  server_cpu: dict[str, float]) -> None:
    """Median and p95 per part over the profiled recalls (ms), statements per recall and, per statement
    kind, the mean CPU its PostgreSQL backend spent (which other processes' load does not inflate much)."""
    labels = sorted({label for row in rows for label in row}, key=lambda label: -np.median([r.get(label, 0.0)
                                                                                             for r in rows]))
    print(f"\nprofile over {queries} recalls (ms; parts do not add up at p95):")
    print(f"{'part':<34} {'p50':>7} {'p95':>7} {'statements/recall':>18} {'server CPU/recall':>18}")
    for label in labels:
        values = [row.get(label, 0.0) for row in rows]
        per = counts.get(label, 0) / queries if label in counts else 0
        cpu = f"{server_cpu[label] / queries:.2f}" if label in server_cpu else ""
        print(f"{label:<34} {np.median(values):>7.2f} {np.percentile(values, 95):>7.2f} "
              f"{(f'{per:.1f}' if per else ''):>18} {cpu:>18}")
    print(f"statements per recall: {sum(counts.values()) / queries:.1f}")


def explain(session: Session, captured: list[tuple[str, str, Any]]) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of each statement of one recall, as it was sent."""
    cursor = session.connection().connection.driver_connection.cursor()
    for label, statement, parameters in captured:
        if not statement.lstrip().upper().startswith(("SELECT", "WITH", "(")):  # "(": a UNION of arms
            continue
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement, parameters)
        plan = [row[0] for row in cursor.fetchall()]
        print(f"\n--- {label}\n" + "\n".join(plan))
    session.execute(text("SELECT 1"))


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


METHODS = {
    "vector only": dict(lexical_weight=0.0, recency_weight=0, salience_weight=0,
                        time_match_weight=0, window_relevance=0),
    "full-text only (IDF)": dict(vector_weight=0.0, recency_weight=0, salience_weight=0,
                                 time_match_weight=0, window_relevance=0),
    "both arms (default)": {},
}


def quality(sessions, embedder, base: RecallConfig) -> None:  # type: ignore[no-untyped-def]
    questions = [json.loads(line) for line in (DATA / "memory_questions.jsonl").read_text().splitlines() if line]
    print(f"\nquality: {len(questions)} questions (tests/data/memory_questions.jsonl)")
    print(f"{'method':<24} {'recall@5':>9} {'recall@10':>10}")
    vectors = {q["question"]: for_requests(embedder).embed(q["question"]) for q in questions}
    for name, changes in METHODS.items():
        config = MemoryConfig(recall=replace(base, **changes))
        scores = {5: 0, 10: 0}
        with sessions() as session:
            for item in questions:
                now = dt.datetime.fromisoformat(item["now"].replace("Z", "+00:00"))
                hits = recall(session, embedder, USER, item["question"], k=10, config=config, now=now,
                              reinforce=False, kinds=("exchange",), query_embedding=vectors[item["question"]])
                for k in scores:
                    if set(item["gold"]) & {e for hit in hits[:k] for e in hit.external_ids}:
                        scores[k] += 1
        print(f"{name:<24} {scores[5] / len(questions):>9.3f} {scores[10] / len(questions):>10.3f}")


def latency_queries(count: int) -> list[str]:
    """Half the set's questions, half chat-like sentences and questions on the distractors' topics."""
    questions = [json.loads(line)["question"] for line in (DATA / "memory_questions.jsonl").read_text().splitlines()
                 if line]
    rng, gen = random.Random(1), ChatGen(seed=7)
    return [rng.choice(questions) if i % 2 else gen.sentence(rng.choice(list(TOPICS))) for i in range(count)]


def latency(sessions, embedder, count: int, timer: StatementTimer | None, show_plans: bool) -> None:  # type: ignore[no-untyped-def]
    """Each query recalled twice: as a caller without a vector does (recall embeds it, overlapped with its
    first statements; the embedder caches nothing), timed with its CPU; then given its vector (profiled)."""
    queries = latency_queries(count)
    config, asked = MemoryConfig(), for_requests(embedder)  # the graph a question is embedded by
    total_ms, recall_ms, embed_ms, parts = [], [], [], []
    client_cpu = server_cpu = 0.0
    with sessions() as session:
        for query in queries[:10]:  # warm-up
            recall(session, embedder, USER, query, config=config, reinforce=False)
        # Frozen as a worker freezes what it loaded (workers/startup.py): unfrozen, a full collection of the model's
        # objects (~70 ms) fell inside some recall, about once in 400 (rcold).
        gc.collect()
        gc.freeze()
        backend = session.scalar(text("SELECT pg_backend_pid()"))
        for query in queries:
            cpu_started = (time.process_time(), backend_cpu_ns(backend))
            started = time.perf_counter()
            recall(session, embedder, USER, query, k=10, config=config, reinforce=False)
            total_ms.append((time.perf_counter() - started) * 1000)
            client_cpu += time.process_time() - cpu_started[0]
            server_cpu += (backend_cpu_ns(backend) - cpu_started[1]) / 1e9
            started = time.perf_counter()
            vector = asked.embed(query)
            embedded = time.perf_counter()
            embed_ms.append((embedded - started) * 1000)
            if timer is not None:
                with timer.recording():
                    recall(session, embedder, USER, query, k=10, config=config, reinforce=False,
                           query_embedding=vector)
            else:
                recall(session, embedder, USER, query, k=10, config=config, reinforce=False, query_embedding=vector)
            recall_ms.append((time.perf_counter() - embedded) * 1000)
            if timer is not None:
                sql = dict(timer.current)
                inline = sum(ms for label, ms in sql.items() if not label.startswith(OVERLAPPED))
                parts.append({"embedding (query, alone)": embed_ms[-1], **sql,
                              "python (rest of recall)": recall_ms[-1] - inline})
        if show_plans and timer is not None:
            explain(session, timer.captured)
    print(f"\nlatency over {count} queries, k=10, all kinds: with the query embedding "
          f"{latency_line(total_ms, (50, 95, 99))}; without it {latency_line(recall_ms)}  "
          f"(embedding alone p50 {np.median(embed_ms):.1f} ms)")
    # CPU time does not grow with the other processes' load the way wall time does: the A/B figure on a busy box.
    print(f"CPU per recall with the embedding: this process {client_cpu / count * 1000:.1f} ms (embedding, Python, "
          f"driver), its PostgreSQL backend {server_cpu / count * 1000:.1f} ms")
    if timer is not None:
        print_profile(parts, dict(timer.counts), count, dict(timer.server_cpu))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="synthetic exchanges to import")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="auto", choices=BACKEND_NAMES)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--embed-now", action="store_true", help="import as `engram import --embed-now`")
    parser.add_argument("--pgdata", help="keep the database here between runs (a full one is reused as is)")
    parser.add_argument("--no-import", action="store_true", help="with --pgdata: recall over what it holds as is")
    parser.add_argument("--no-quality", action="store_true", help="skip the comparison of the arms")
    parser.add_argument("--profile", action="store_true", help="time each part of a recall")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the statements of one recall")
    args = parser.parse_args(argv)
    embedder = load_embedder(args.embedder, cache_size=0)
    with database(args.pgdata) as (engine, sessions):
        lines, _, _ = parse_lines(chat_lines(args.n) + (DATA / "memory_set.jsonl").read_text().splitlines())
        records = pair_exchanges(lines)
        built = Path(args.pgdata or ".") / "bench-import.json"
        with sessions() as session:
            have = session.scalar(text("SELECT count(*) FROM exchanges WHERE user_id = :u"), {"u": USER}) or 0
        if args.pgdata and args.no_import:
            print(f"import: skipped (--no-import); {args.pgdata} holds {have} exchanges of {USER}")
        elif args.pgdata and have >= len(records) and built.is_file():
            print_import(json.loads(built.read_text()), embedder, args.batch_size,
                         reused=f" (reused {args.pgdata}, built earlier)")
        else:
            load, timed = load_average(), TimedEmbedder(embedder)
            stats = {**import_history(sessions, timed, USER, records, args.batch_size, args.embed_now),
                     "embedding_s": timed.seconds, "load": load}
            print_import(stats, embedder, args.batch_size)
            if args.pgdata:
                built.write_text(json.dumps(stats))
            with sessions.begin() as session:
                session.execute(text("ANALYZE"))
        print(f"load average before the recall runs: {load_average()}")
        if not args.no_quality:
            quality(sessions, embedder, RecallConfig())
        timer = StatementTimer(engine) if args.profile or args.explain else None
        latency(sessions, embedder, args.queries, timer, args.explain)
        print(f"load average at the end: {load_average()}")
