"""``python -m bench.recall pair``: two source trees' recall processes on one PostgreSQL, taking turns query by query.

Run from the repository root, on a database ``python -m bench.recall --pgdata DIR`` built:
    python -m bench.recall pair --pgdata DIR --a TREE_A --b TREE_B [--mode embed|given] [--live]

Each tree (a checkout, e.g. ``git worktree add`` or ``git archive | tar -x``) runs in its own process with its
own code (PYTHONPATH), both warmed up and gc-frozen as a worker process is (workers/startup.py); then the 200
queries of the scale mode's latency alternate between them (A then B for two queries, then B then A for two), so the
machine's load drifts the same way for both and cancels in the per-query differences. ``embed``: recall embeds
the query (as a caller without a vector); ``given``: the query's vector is passed in. Prints each side's p50 /
p95 / p99, its CPU per recall (the process, its PostgreSQL backend) and the median and mean of B − A per query
(``--dump FILE``: each query's figures, for a breakdown by kind of query; ``--only`` some queries, e.g. those naming
a speaker, ``--forget-names`` each one's first time in a process).
The per-query median and the CPU are the figures to compare on a busy machine; a p95 of 200 queries moves with
the load. ``--live``: before each pair this process stores one new exchange as a chat turn is stored
(bench/recall/live.py's ``LiveWriter``, this tree's code; with its chunk and facts when the database is enriched),
so both sides' recalls meet a history that grew since their last one, as a chatting person's do (it writes DIR).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERIES = 200


def backend_cpu_ns(pid: int) -> int:
    """Nanoseconds a process of this machine (a PostgreSQL backend) has run on a CPU so far."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def serve(url: str, mode: str, asked: Path, forget_names: bool = False) -> None:
    """One side: recall the query whose index each stdin line holds; print its wall ms and CPU ms. ``forget_names``:
    before each recall the process forgets which words named a speaker (each named query's first time).
    ``asked``: the user and the queries, from the parent (a side imports nothing of bench/, only the tree's code)."""
    from sqlalchemy import text

    from services import embeddings
    from services.db import make_engine, make_sessionmaker
    from services.embeddings import load_embedder
    from services.memory import speakers
    from services.memory.config import MemoryConfig
    from services.memory.recall import recall

    # A tree from before the embedder pair embeds its questions with the one embedder it has.
    for_requests = getattr(embeddings, "for_requests", lambda embedder: embedder)

    embedder = load_embedder("auto", cache_size=0)
    sessions = make_sessionmaker(make_engine(url, pool_size=2))
    user, queries = json.loads(asked.read_text())
    config = MemoryConfig()
    vectors = [for_requests(embedder).embed(query) for query in queries] if mode == "given" else None
    with sessions() as session:
        for query in queries[:10]:
            recall(session, embedder, user, query, config=config, reinforce=False)
        gc.collect()
        gc.freeze()
        backend = session.scalar(text("SELECT pg_backend_pid()"))
        print("ready", flush=True)
        for line in sys.stdin:
            i = int(line)
            if forget_names:
                speakers.GUESSES = speakers.SpeakerGuesses()
            cpu, server, started = time.process_time(), backend_cpu_ns(backend), time.perf_counter()
            recall(session, embedder, user, queries[i], k=10, config=config, reinforce=False,
                   query_embedding=vectors[i] if vectors is not None else None)
            wall = (time.perf_counter() - started) * 1000
            print(json.dumps([wall, (time.process_time() - cpu) * 1000, (backend_cpu_ns(backend) - server) / 1e6]),
                  flush=True)


def run(pgdata: Path, trees: dict[str, Path], mode: str, live: bool = False, merge: bool = True,
        dump: Path | None = None, only: list[int] | None = None, forget_names: bool = False) -> None:
    from bench.recall import USER, database, latency_line, load_average
    from bench.recall.scale import latency_queries

    load = load_average()
    asked = tempfile.NamedTemporaryFile("w", suffix=".json")
    with database(pgdata, migrate=False) as (engine, sessions), asked:
        asked.write(json.dumps([USER, latency_queries(QUERIES)]))
        asked.flush()
        url = engine.url.render_as_string(hide_password=False)
        sides = {name: _start(tree, url, mode, Path(asked.name), forget_names) for name, tree in trees.items()}
        writer = _writer(sessions, merge) if live else None
        results: dict[str, list[list[float]]] = {name: [] for name in trees}
        stored: list[dict[str, float]] = []
        for i in range(QUERIES):
            if writer is not None:
                stored.append(writer.store_one())
            # Who goes first turns every second query: the queries alternate in kind (scale.py's latency_queries:
            # chat sentences at even places, the set's questions at odd ones), and the side going second finds the
            # query's rows in PostgreSQL's cache. Turning at every query gave side B ~1.5–2.7 ms a query (rlat9).
            for name in ("A", "B") if (i // 2) % 2 == 0 else ("B", "A"):
                sides[name].stdin.write(f"{only[i % len(only)] if only else i}\n")
                sides[name].stdin.flush()
                results[name].append(json.loads(sides[name].stdout.readline()))
        for side in sides.values():
            side.stdin.close()
            side.wait()
    print(f"mode {mode}, {QUERIES} pairs, load average {load} → {load_average()}")
    for name, rows in results.items():
        values = np.array(rows)
        print(f"{name} ({trees[name]}): {latency_line(list(values[:, 0]), (50, 95, 99))}; CPU per recall: process "
              f"{values[:, 1].mean():.1f}, backend {values[:, 2].mean():.1f} ms")
    if dump is not None:  # every query's [wall, process CPU, backend CPU] of each side, in query order
        dump.write_text(json.dumps(results))
    diff = np.array([b[0] - a[0] for a, b in zip(results["A"], results["B"], strict=True)])
    print(f"B − A per query: median {np.median(diff):+.1f} ms, mean {diff.mean():+.1f} ms")
    if stored:
        steps = {step: np.mean([row.get(step, 0.0) for row in stored]) for step in stored[0]}
        print(f"live: {len(stored)} exchanges stored, one before each pair (ms each, mean: "
              + ", ".join(f"{step} {value:.1f}" for step, value in steps.items()) + ")")


def _writer(sessions, merge: bool):  # type: ignore[no-untyped-def]
    """The live writer: enriched (a chunk and facts per stored turn) when the database holds chunks."""
    from sqlalchemy import text

    from bench.recall.live import LiveWriter
    from services.embeddings import load_embedder

    with sessions() as session:
        enriched = bool(session.scalar(text("SELECT EXISTS (SELECT 1 FROM memory_chunks)")))
    return LiveWriter(sessions, load_embedder("auto", cache_size=0), enriched, merge=merge)


def _start(tree: Path, url: str, mode: str, asked: Path, forget_names: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # This file, run as a script, imports the rest from the tree (a base tree need not hold this bench).
    side = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", url, "--mode", mode,
                             "--asked", str(asked)]
                            + (["--forget-names"] if forget_names else []),
                            cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    while side.stdout.readline().strip() != "ready":
        if side.poll() is not None:
            raise RuntimeError(f"the recall process of {tree} exited ({side.returncode})")
    return side


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recall pair", description=__doc__.splitlines()[0])
    parser.add_argument("--pgdata", help="a database the scale mode built (--pgdata)")
    parser.add_argument("--a", help="source tree A (the base)")
    parser.add_argument("--b", help="source tree B (the change)")
    parser.add_argument("--mode", default="embed", choices=["embed", "given"])
    parser.add_argument("--live", action="store_true", help="store an exchange before each pair (writes DIR)")
    parser.add_argument("--no-merge", action="store_true",
                        help="with --live: leave the lines' pending full-text entries (the chunker before rlive)")
    parser.add_argument("--dump", type=Path, help="write each query's figures of both sides to this JSON file")
    parser.add_argument("--only", metavar="I,J,…", help="these queries' indices only, in turn, for the 200 pairs")
    parser.add_argument("--forget-names", action="store_true",
                        help="each recall as a process's first naming its speaker (no guess: speakers.GUESSES)")
    parser.add_argument("--serve", metavar="URL", help=argparse.SUPPRESS)  # one side's process
    parser.add_argument("--asked", type=Path, help=argparse.SUPPRESS)  # its user and queries
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.mode, args.asked, args.forget_names)
        return
    if not (args.pgdata and args.a and args.b):
        parser.error("--pgdata, --a and --b are needed")
    from bench.recall import built_database  # here: a side runs this file against another tree's modules

    pgdata, trees = built_database(parser, args.pgdata), {"A": Path(args.a).resolve(), "B": Path(args.b).resolve()}
    # A tree without recall would fail late.
    for name, tree in trees.items():
        if not (tree / "services" / "memory" / "recall.py").is_file():
            parser.error(f"--{name.lower()} {tree}: not an Engram source tree (no services/memory/recall.py)")
    only = _indices(parser, args.only) if args.only else None
    run(pgdata, trees, args.mode, args.live, not args.no_merge, args.dump, only, args.forget_names)


def _indices(parser: argparse.ArgumentParser, listed: str) -> list[int]:
    """``--only``'s query indices, each of the 200 (a clear refusal otherwise, before any server starts)."""
    try:
        indices = [int(item) for item in listed.split(",")]
    except ValueError:
        parser.error(f"--only {listed!r}: comma-separated query indices, e.g. 3,17,40")
    if any(not 0 <= i < QUERIES for i in indices):
        parser.error(f"--only {listed!r}: every index must be from 0 to {QUERIES - 1}")
    return indices


if __name__ == "__main__":
    main()
