"""Recall bench at scale: import throughput, recall quality by fusion method, recall latency and its profile.

Run from the repository root:
    python -m bench.recall [--n 100000] [--queries 200] [--pgdata DIR] [--profile] [--explain]

Starts a throwaway PostgreSQL (pgvector) under a temp dir (or ``--pgdata DIR``, kept between runs)
and imports N exchanges of synthetic chat (``bench/chatgen.py``: sessions on drifting topics,
varied turn lengths, Zipfian vocabulary, named speakers in a third of the sessions) plus the
conversation set of tests/data/memory_set.jsonl through the real import path (parse_lines →
pair_exchanges → store_records: batched real embeddings, --no-enrich), then:
  * quality: recall@5 / recall@10 of the set's questions (tests/data/memory_questions.jsonl)
    among the N distractors, for vector-only, full-text-only, RRF, min-max and absolute fusion,
    with and without neighbouring turns;
  * latency: p50 / p95 of recall() with the query embedding (a fresh text each time, cache off)
    and without it (the same recall given the vector);
  * ``--profile``: the median and p95 of each part of a recall (embedding, each SQL statement
    by the function that sent it, the rest = Python), and statements per recall;
    ``--explain``: EXPLAIN (ANALYZE, BUFFERS) of every statement of one recall.
With ``--pgdata`` a database already holding the N exchanges is reused: the import line then
says so and repeats the rate measured when it was built (kept in DIR/bench-import.json);
``--no-import`` measures recall over whatever DIR holds, and says how many exchanges that is.

Round one (branch recalls; 100,034 exchanges built once with ``--pgdata``, then ``--no-import``,
before/after alternated on the same database at load 0.6–2.8, 200 queries each): with the query
embedding p50 131–157 → 70–75 ms, p95 189–241 → 126–141 ms; statements per recall 11.6 → 8.6.
Changed: the user's turn count from a trigger-kept counter (migration 0010; counting their turns
took 59–73 ms at p50); a plan per statement (``plan_cache_mode``: psycopg prepares a statement on
its fifth run and a generic plan made BM25 cost 17–25 ms whatever it matched); the turns around
the seeds fetched by an id array; a time window's vector arm by exact distance over the window's
rows (HNSW filtered by time took 30–220 ms for a month); BM25 unnesting only a turn's query
lexemes; one statement per fact or episode kind; rows fetched at once. LoCoMo unchanged.

Not reached: p95 ≤ 50 ms at 100k. What is left, largest first: the BM25 statement when rare
words still match thousands of turns (p95 49 ms), Python (~19 ms, a third of it scoring ~280
candidate turns, which belongs to the ranking work), the window rows' per-row BM25 (14 ms),
HNSW at ef_search 100 (9 ms; the 100k exchanges' vectors and index are ~350 MB against
PostgreSQL's default 128 MB shared_buffers), the query embedding (8 ms).

Round two (issue 9 speed, branch rspeed), same database and queries, before = the code at the
start of the round, after = this code, run alternately (b, a, b, a, ...) on the shared box at load
average 8–15 (other engineers' benches and tests): wall times there are 2–3× an idle machine's and
swing by tens of ms between identical runs, so the CPU a recall costs is the figure to compare.
``CPU per recall`` (new) is this process's CPU (query embedding, Python, driver) and its PostgreSQL
backend's (from /proc); the profile's last column is the backend's CPU per statement kind:

  recall at 100k, k=10, 150–200 queries      before (6 runs)            after (6 runs)
  PostgreSQL backend CPU per recall           32.5–41.7 ms               21.6–28.5 ms
  this process's CPU per recall               28.6–39.2 ms               29.3–38.3 ms (unchanged)
  wall p50 / p95 with the embedding (loaded)  133–213 / 268–390 ms       104–188 / 192–300 ms
  statements per recall                       9.7                        8.1

  backend CPU per recall by part (ms)         before            after
  BM25 over the turns holding a query word    7.7–10.8          3.1–4.3  (p95 wall 86–130 → 23–41)
  the turns around the seeds (window_rows)    11–14 (2 stmts)   9–12 (1 statement)
  HNSW nearest exchanges                      7.6–9.0           4.6–5.5
  query terms and IDF (line_terms), with the  4.0–5.1 (2 stmts  3.5–3.8 (1 statement; 2.0–2.7
  exact counts of words the sample lacks      in half)          before that merge)
  facts and episodes, speaker name, settings  ~2.2              ~2.2 (unchanged)

What changed (LoCoMo identical: every hit, score and turn of all 997 dev questions compared before
and after each change, and ``bench.locomo`` printed the same numbers):
  * PostgreSQL's memory is sized for the machine (services/embedded/postgres.py ``memory_settings``):
    shared_buffers an eighth of RAM between 128 MB and 1 GB (1 GB here; the exchanges' vectors, their
    HNSW index and the turns are ~550 MB at 100k), effective_cache_size half of RAM. HNSW's CPU fell
    by a third: its 195 MB index no longer competes for 128 MB of buffers. Sequential scans no longer
    synchronise: line_terms samples "the first 2,000 turns", and a synchronised scan starts where the
    last one stopped, so at 100k the sample, the IDFs and the ranking changed from recall to recall.
  * BM25 scores at most ``match_cap`` = 1,000 matching turns (was 5,000), and when the rare query
    words may match more than that, only the rarest ones whose document frequencies fit search the
    index (the others still score). Before, a query such as "Okay, Thursday works." scored 5,000
    arbitrary turns (the oldest, in storage order: ~50 ms idle), and a query whose several rare words
    matched thousands of turns could cut the turn holding the rarest word (a name) when it was stored
    late. A user with at most match_cap turns (every LoCoMo conversation: ≤ 680) is unaffected.
    recall@5/@10 of the 28 set questions among the 100k distractors: 11–12 / 13 of 28 either way.
  * line_terms parses each query lexeme's tsquery once, not once per sampled turn (3.4–4.5 → 2.0–2.7
    ms), and counts a word the sample barely holds in the same statement (half the recalls sent one more).
  * window_rows: the lines of the vector arm's exchanges are found in window_rows' statement (one
    statement less); the query's similarity is computed once per exchange (each reads a 1.5 kB vector
    from TOAST), not per turn; a turn holding no query word gets BM25 0 from one ``@@`` instead of the
    unnest/join; PostgreSQL sorts the rows. Alone, on the same calls: backend 9.9 → 7.8 ms, client 6.9 → 5.8 ms.
Tried and dropped: two ONNX threads for the query embedding (at load 13: p50 23–25 → 42–43 ms,
16 ms of CPU instead of 8: the second thread waits for a core; idle not measured); pruning BM25's
scoring by a per-turn bound (Σ idf of the matched words × (k1+1) against the 60th best lower bound)
was exact but kept nearly every row of a common-word query.

What is left, largest first (CPU per recall under this load; idle is roughly 0.6–0.7× of it): Python
~20 ms (SQLAlchemy and psycopg ~0.7 ms per statement; scoring ~290 candidate turns one dict at a
time, ~4 ms, which belongs to the ranking code; converting window_rows' ~600 rows, ~5 ms), window_rows
~10 ms in PostgreSQL (a third of it reading exchange vectors from TOAST: storing them inline needs a
table rewrite), the query embedding (~8 ms idle, one ONNX thread), HNSW at ef_search 100 (~5 ms),
and facts/episodes (two statements even for a user with none). An impact-ordered posting table
(lexeme → turns, best BM25 weight first) would let a common-word query read its best postings
instead of 1,000 arbitrary ones; it needs a trigger-kept table of ~2M rows at 100k. p95 ≤ 50 ms
is not shown here: the lead's idle re-measurement decides it.

Round three (issues 9 and 10 hot path, branch rfast), same database and 200 queries, main (the code at
the start of the round) and this code run alternately (main, after, main, after) at load average 1.7–3.1:

  recall at 100k, k=10                        before (2 runs)            after (2 runs)
  this process's CPU per recall               35.2–36.1 ms               24.3–25.5 ms
  PostgreSQL backend CPU per recall           25.8–26.2 ms               22.2–23.6 ms
  wall p50 / p95 with the embedding           62.0–64.0 / 94.1–100.0 ms  47.2–49.4 / 69.7–80.7 ms
  wall p50 / p95 without it                   53.6–56.2 / 86.3–92.4 ms   38.6–42.4 / 61.8–74.5 ms
  statements per recall                       8.1                        3.0
  profile's "python (rest of recall)" p50     22.4–23.1 ms               13.5–16.0 ms

  backend CPU per recall by part (ms)         before                     after
  the arms and the turns around the seeds     20.4–20.6 (window_rows,    18.4–19.4 (one statement)
                                              BM25 arm, HNSW arm, time
                                              window and speaker arms:
                                              3.2 statements)
  settings, named speaker, facts, episodes    1.9 (4 statements)         0.7 (one statement)
  query terms and IDF (line_terms)            3.5                        3.2–3.4 (unchanged)

What changed (each change checked by comparing every hit of 202 queries at 100k with main's: kind,
id, score, signals, external ids, turns, text and meta identical; ``bench.locomo`` before and after:
0.743 / 0.831 / 0.885 within 5 / 10 / 20 turns, every category and conversation identical):
  * one opening statement per recall: the search settings, whether the user holds any active fact
    and any episode (an EXISTS each, by their user index: cannot go stale, no counter to keep), and
    which of the query's words name a speaker. A user with neither (every chat user before the digest
    enriches anything, every ``--no-enrich`` import) sends no fact or episode statement: 8.1 → 5.1
    statements; this process 37.9 → 31.5 ms CPU, backend 26.2 → 24.2 ms (one pair of runs).
  * the lexical (BM25), vector (HNSW), speaker and time-window arms run inside window_rows' statement
    (each an ``ARRAY(...)`` of ids computed once, where their ids used to come back to Python and go
    out again): 5.1 → 3.0 statements, this process 31.5 → 28.2 ms.
  * an exchange's own texts (user_text, reply) come once, on its first fetched turn, instead of on
    each of its ~2 turns of ~700 rows: leaving the texts out altogether (one pair of runs) saved 1.7 ms
    of backend CPU and 3.5 ms of this process's; sending them once keeps most of that.
  * scoring: the boosts (recency, salience, access, time window) are computed once per exchange, not
    once per candidate turn, and a candidate's nearby turns are found once for its two context signals
    (about 1 ms under cProfile; within the noise of the bench's CPU figures).
What is left (after, CPU per recall): window_rows ~19 ms in PostgreSQL (BM25 over up to 1,000 turns
holding a common query word, ~4 ms; the query's similarity to ~400 exchange vectors read from TOAST,
~3 ms; ~700 rows out), Python ~14 ms (SQLAlchemy/psycopg, the rows, scoring ~290 turns), the query
embedding ~8 ms, line_terms ~3.5 ms. A user with facts or episodes still pays one statement per kind.
p95 ≤ 50 ms with the embedding is not shown at this load (69.7–80.7 ms); LoCoMo's own recall latency
(5 users of ≤ 680 turns, nice 10, load ~3) went from p50 56.4 / p95 71.5 ms to 39.6–42.9 / 55.0–56.0 ms.

Import at 100k (``--no-enrich``, realistic chat: median 34 words per exchange). The import no
longer embeds: ``store_records`` writes each batch of 256 exchanges with their turns, threads,
sessions and full-text data in one transaction without vectors (searchable by their words at
once), and the vector backfill (``services/memory/vectors.py``, run by the memory-chunker
workers; here ``fill_all`` to completion, a claim-embed-store loop per core, as the job runs it)
computes the same vectors afterwards. The import line prints the two rates apart. ``--embed-now``
imports as ``engram import --embed-now`` (inline, as before).

Measured (issue 9 import round, branch imp) on a copy of the 100k database above (migrated to
0011), 3,000 more generated exchanges per run under a new user, old code (the inline-embedding
import at the start of the round) and new back to back, load average 9–14 on the 2 shared cores
(other engineers' benches running; all wall-clock numbers inflated by it; "?": not recorded):

  run (in the order run)        stored                 vectors (backfill)            client CPU / exchange
  old 1 (inline, 2 threads)     18/s (170 s)           inline                        23 ms
  new 1 (backfill, one loop)    349/s (8.6 s)          14/s (218 s)                  0.6 ms + ?
  new 2 (backfill, one loop)    454/s (6.6 s)          15/s (198 s)                  0.7 ms + ?
  old 2                         19/s (155 s)           inline                        25 ms
  new 3 (a loop per core)       376/s (8.0 s)          14/s (218 s)                  0.8 ms + 24 ms
  old 3 (my tests ran beside)   12/s (256 s)           inline                        25 ms

The store rate meets issue 9's ≥ 300 exchanges/s with --no-enrich at 100k even at load 9–11:
the client spends under 1 ms of CPU per exchange, the rest is PostgreSQL (turn rows with their
GIN full-text entries, exchange rows; no HNSW insert until the vector arrives). The vectors still
cost what they did (the same ~24 ms of client CPU per exchange in the model as the inline
import, plus PostgreSQL's HNSW insert and a new row version per exchange and named turn on
update), and under this load the backfill ran at 14–15/s against the inline import's 12–19/s,
so the time until recall has every vector signal is about unchanged;
what changed is that it no longer holds the command up, and that recall works meanwhile (a row
without a vector has no vector signal: BM25 and the other signals rank it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from sqlalchemy import text

from bench.chatgen import TOPICS, ChatGen, chat_lines
from bench.recall_profile import StatementTimer, explain, print_profile
from services.db import make_engine, make_sessionmaker
from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embeddings import load_embedder
from services.memory import vocabulary
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall
from services.memory.vectors import fill_all
from services.migrate import upgrade_head

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
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


def latency_queries(count: int) -> list[str]:
    """Half the set's questions, half chat-like sentences and questions on the distractors' topics."""
    questions = [json.loads(line)["question"] for line in (DATA / "memory_questions.jsonl").read_text().splitlines()
                 if line]
    rng, gen = random.Random(1), ChatGen(seed=7)
    return [rng.choice(questions) if i % 2 else gen.sentence(rng.choice(list(TOPICS))) for i in range(count)]


def latency(sessions, embedder, count: int, timer: StatementTimer | None, show_plans: bool) -> None:  # type: ignore[no-untyped-def]
    queries = latency_queries(count)
    config = MemoryConfig()
    total_ms, recall_ms, embed_ms, parts = [], [], [], []
    with sessions() as session:
        for query in queries[:10]:  # warm-up
            recall(session, embedder, USER, query, config=config, reinforce=False)
        backend = session.scalar(text("SELECT pg_backend_pid()"))
        cpu_started = (time.process_time(), backend_cpu_s(backend))
        for query in queries:
            started = time.perf_counter()
            vector = embedder.embed(query + f" #{len(total_ms)}")  # a fresh text: no cache hit
            embedded = time.perf_counter()
            if timer is not None:
                with timer.recording():
                    recall(session, embedder, USER, query, k=10, config=config, reinforce=False,
                           query_embedding=vector)
            else:
                recall(session, embedder, USER, query, k=10, config=config, reinforce=False, query_embedding=vector)
            done = time.perf_counter()
            total_ms.append((done - started) * 1000)
            recall_ms.append((done - embedded) * 1000)
            embed_ms.append((embedded - started) * 1000)
            if timer is not None:
                sql = dict(timer.current)
                parts.append({"embedding (query)": embed_ms[-1], **sql,
                              "python (rest of recall)": recall_ms[-1] - sum(sql.values())})
        client_cpu, server_cpu = time.process_time() - cpu_started[0], backend_cpu_s(backend) - cpu_started[1]
        if show_plans and timer is not None:
            explain(session, timer.captured)
    p50, p95, p99 = np.percentile(total_ms, [50, 95, 99])
    r50, r95 = np.percentile(recall_ms, [50, 95])
    print(f"\nlatency over {count} queries, k=10, all kinds: with the query embedding p50 {p50:.1f} ms  "
          f"p95 {p95:.1f} ms  p99 {p99:.1f} ms; without it p50 {r50:.1f} ms  p95 {r95:.1f} ms  "
          f"(embedding alone p50 {np.median(embed_ms):.1f} ms)")
    # CPU time does not grow with the other processes' load the way wall time does: the A/B figure on a busy box.
    print(f"CPU per recall: this process {client_cpu / count * 1000:.1f} ms (embedding, Python, driver), "
          f"its PostgreSQL backend {server_cpu / count * 1000:.1f} ms")
    if timer is not None:
        print_profile(parts, dict(timer.counts), count, dict(timer.server_cpu))


def backend_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a PostgreSQL backend on this machine has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="synthetic exchanges to import")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="auto", choices=["auto", "sentence-transformers", "onnx"])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--embed-now", action="store_true", help="import as `engram import --embed-now`")
    parser.add_argument("--pgdata", help="keep the database here between runs (a full one is reused as is)")
    parser.add_argument("--no-import", action="store_true", help="with --pgdata: recall over what it holds as is")
    parser.add_argument("--no-quality", action="store_true", help="skip the fusion-method comparison")
    parser.add_argument("--profile", action="store_true", help="time each part of a recall")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the statements of one recall")
    args = parser.parse_args()
    embedder = load_embedder(args.embedder, cache_size=0)
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        folder = Path(args.pgdata or tmp)
        server = EmbeddedPostgres(folder, port=free_port())
        server.start()
        try:
            engine = make_engine(server.url, pool_size=2)
            upgrade_head(engine)
            sessions = make_sessionmaker(engine)
            lines, _, _ = parse_lines(chat_lines(args.n) + (DATA / "memory_set.jsonl").read_text().splitlines())
            records = pair_exchanges(lines)
            built = folder / "bench-import.json"
            with sessions() as session:
                have = session.scalar(text("SELECT count(*) FROM exchanges WHERE user_id = :u"), {"u": USER}) or 0
            if args.pgdata and args.no_import:
                print(f"import: skipped (--no-import); {folder} holds {have} exchanges of {USER}")
                fill_vocabulary(sessions, embedder)
            elif args.pgdata and have >= len(records) and built.is_file():
                print_import(json.loads(built.read_text()), embedder, args.batch_size,
                             reused=f" (reused {folder}, built earlier)")
            else:
                load = load_average()
                stats = {**import_records(sessions, embedder, records, args.batch_size, args.embed_now), "load": load}
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
            engine.dispose()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
