"""Routing latency: signals + scoring alone, and embedding + routing, over 1,000 messages.

Run from the repository root:  python -m bench.routing [--n 1000] [--embedder sentence-transformers|onnx]
Targets (issue 3): routing p99 <= 1 ms; embedding + routing p50 <= 20 ms on one torch thread.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from services.embeddings import BACKEND_NAMES, for_requests, load_embedder
from services.router.mode_router import ModeRouter, context_from_record
from services.settings import Settings

ROUTING_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "routing_set.jsonl"


def percentiles(samples_ms: list[float]) -> str:
    p50, p95, p99 = np.percentile(samples_ms, [50, 95, 99])
    return f"p50 {p50:7.3f} ms   p95 {p95:7.3f} ms   p99 {p99:7.3f} ms   max {max(samples_ms):7.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="messages to route (the routing set, cycled)")
    parser.add_argument("--embedder", default="auto", choices=BACKEND_NAMES)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    settings = Settings.from_env()
    # No cache: the routing set repeats when cycled, and every message must pay for its own embedding.
    embedder = load_embedder(args.embedder, cache_size=0, threads=args.threads)
    embedder = for_requests(embedder)  # a message is embedded once and routed, not kept as memory
    router = ModeRouter(settings.configs_dir, embedder)
    rows = [json.loads(line) for line in ROUTING_SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    messages = [rows[i % len(rows)] for i in range(args.n)]
    print(f"{args.n} messages from {ROUTING_SET.name} ({len(rows)} distinct), embedder {embedder.model_id}, "
          f"{args.threads} thread(s)")

    vectors = {row["text"]: embedder.embed(row["text"]) for row in rows if row["text"].strip()}
    contexts = [context_from_record(row["text"], row.get("context"), vectors.get(row["text"])) for row in messages]
    for ctx in contexts[:50]:  # warm-up: first calls pay for lazy imports and cold caches
        router.route(ctx)

    outside, inside = [], []
    for ctx in contexts:
        started = time.perf_counter()
        decision = router.route(ctx)
        outside.append((time.perf_counter() - started) * 1000)
        inside.append(decision.latency_ms)
    print(f"routing only (signals + scoring, embedding given)    {percentiles(outside)}")
    print(f"  as recorded in RoutingDecision.latency_ms          {percentiles(inside)}")

    total, embedding_only = [], []
    for row in messages:
        started = time.perf_counter()
        vector = embedder.embed(row["text"]) if row["text"].strip() else None
        embedded = time.perf_counter()
        router.route(context_from_record(row["text"], row.get("context"), vector))
        total.append((time.perf_counter() - started) * 1000)
        embedding_only.append((embedded - started) * 1000)
    print(f"embedding only                                       {percentiles(embedding_only)}")
    print(f"classification (embedding + routing)                 {percentiles(total)}")


if __name__ == "__main__":
    main()
