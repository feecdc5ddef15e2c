"""Routing accuracy on the tuning sets and the frozen sets, then routing latency over 1,000 messages.

Run from the repository root:  python -m bench.routing [--n 1000] [--embedder auto|onnx|...] [--misses]

Two kinds of labelled set, reported apart:
- *Tuning* sets: weights, exemplars and word lists were tuned looking at their misses (or their author
  tuned the router), so their figures say little about messages never seen.
  - tests/data/routing_set.jsonl: issue 3's set and issue 31's commands; every 5th of its first 494 lines
    is held out ("held-out fifth").
  - tests/data/routing_tuning1.jsonl (was routing_frozen.jsonl): written apart from the router, but by the
    engineer who then tuned it; some of its phrasings were remembered while tuning.
  - tests/data/routing_tuning2.jsonl (was routing_frozen2.jsonl): written by someone who never read the
    router; frozen until issue 31's second round tuned on its misses.
  - tests/data/routing_tuning3.jsonl (was routing_frozen3.jsonl): written blind; measured once (0.888), then
    tuned on from issue 31's third round.
  - tests/data/routing_tuning4.jsonl (was routing_frozen4.jsonl): written blind; measured once (0.903), then
    tuned on from issue 31's fourth round (2026-11-29).
  - tests/data/routing_tuning5.jsonl (was routing_frozen5.jsonl): written blind; measured once (0.960), then
    tuned on from issue 31's fifth round (2026-11-29).
  - tests/data/routing_tuning6.jsonl (was routing_frozen6.jsonl): written blind; measured once (0.908), then
    tuned on from issue 31's sixth round (2026-11-29).
  - tests/data/routing_tuning7.jsonl (was routing_frozen7.jsonl): written blind; measured once (0.925), then
    tuned on from issue 31's seventh round (2026-11-29).
  - tests/data/routing_tuning8.jsonl (was routing_frozen8.jsonl): written blind; measured once (0.931), then
    tuned on from issue 31's eighth round (2026-11-29).
  - tests/data/routing_tuning9.jsonl (was routing_frozen9.jsonl): written blind; measured once (0.928, CLARIFY
    0.783 on main 34b8f34), then tuning material (2026-11-29).
  - tests/data/routing_tuning10.jsonl (was routing_frozen10.jsonl): written blind; measured once (0.944, CLARIFY
    0.733 on main b2736db), then tuning material (2026-11-29).
  - tests/data/routing_tuning11.jsonl (was routing_frozen11.jsonl): written blind; measured once (0.917, CLARIFY
    0.783 on main 00b14af), then tuning material (2026-11-29).
  - tests/data/routing_tuning12.jsonl (was routing_frozen12.jsonl): written blind; measured once (0.947, CLARIFY
    0.850 on main 27d26e3), then tuning material (2026-11-30).
  - tests/data/routing_tuning13.jsonl (was routing_frozen13.jsonl): written blind; measured once (0.917, CLARIFY
    0.833 on main c229494), then tuning material (2026-11-30).
  - tests/data/routing_tuning14.jsonl (was routing_frozen14.jsonl): written blind; measured once (0.947, CLARIFY
    0.850 on main b0a7d49), then tuning material (2026-11-30).
  - tests/data/routing_tuning15.jsonl (was routing_frozen15.jsonl): written blind; measured once (0.947, CLARIFY
    0.883 on main bf62023), then tuning material (2026-11-30).
  - tests/data/routing_tuning16.jsonl (was routing_frozen16.jsonl): written blind; measured once (0.944, CLARIFY
    0.900 on main ba91217), then tuning material (2026-11-30).
  - tests/data/routing_tuning17.jsonl (was routing_frozen17.jsonl): written blind; measured once (0.939, CLARIFY
    0.833 on main 5f42749), then tuning material (2026-11-30).
  - tests/data/routing_tuning18.jsonl (was routing_frozen18.jsonl): written blind; measured once (0.947, CLARIFY
    0.817 on main 31d0ede), then tuning material (2026-11-30).
  - tests/data/routing_tuning19.jsonl (was routing_frozen19.jsonl): written blind; measured once (0.944, CLARIFY
    0.833 on main 5ea8087), then tuning material (2026-11-30).
  - tests/data/routing_tuning20.jsonl (was routing_frozen20.jsonl): written blind; measured once (0.947, CLARIFY
    0.817 on main 9e6cda3), then tuning material (2026-11-30).
  - tests/data/routing_tuning21.jsonl (was routing_frozen21.jsonl): written blind; measured once (0.952, CLARIFY
    0.883, ACT 0.927 on main ee8bda5), then tuning material (2026-11-30).
  - tests/data/routing_tuning22.jsonl (was routing_frozen22.jsonl): written blind; measured once (0.925, CLARIFY
    0.800, ACT 0.909 on main fde0f78), then tuning material (2026-11-30).
  - tests/data/routing_tuning23.jsonl (was routing_frozen23.jsonl): written blind; measured once (0.920, CLARIFY
    0.717, ACT 0.927 on main b4bb807), then tuning material (2026-12-01).
  - tests/data/routing_tuning24.jsonl (was routing_frozen24.jsonl): written blind; measured once (0.933, CLARIFY
    0.750, ACT 0.945 on main 355ee07), then tuning material (2026-12-01).
  - tests/data/routing_tuning25.jsonl (was routing_frozen25.jsonl): written blind; measured once (0.939, CLARIFY
    0.767, ACT 0.955 on main 0ddda9e), then tuning material (2026-12-01).
  - tests/data/routing_tuning26.jsonl (was routing_frozen26.jsonl): written blind; measured once (0.925, CLARIFY
    0.817, ACT 0.891 on main df70e51), then tuning material (2026-12-01).
  - tests/data/routing_tuning27.jsonl (was routing_frozen27.jsonl): written blind; measured once (0.968, CLARIFY
    0.833, ACT 1.000 on main fd7693c), then tuning material (2026-12-02).
  - tests/data/routing_tuning28.jsonl (was routing_frozen28.jsonl): written blind; measured once (0.979, CLARIFY
    0.933, ACT 0.991 on main 87f9226), then tuning material (2026-12-02).
  - tests/data/routing_tuning29.jsonl (was routing_frozen29.jsonl): written blind; measured once (0.973, CLARIFY
    0.917, ACT 0.991 on main 3a2bfe3), then tuning material (2026-12-02).
  - tests/data/routing_tuning30.jsonl (was routing_frozen30.jsonl): written blind; measured once (0.960, CLARIFY
    0.817, ACT 0.982 on main 9e0e202), then tuning material (2026-12-02).
  - tests/data/routing_tuning31.jsonl (was routing_frozen31.jsonl): written blind; measured once (0.973, CLARIFY
    0.867, ACT 0.991 on main c938356), then tuning material (2026-12-02).
  Every ``routing_tuning*.jsonl`` present is reported. In each, a fixed random third of the lines
  (``held_out_third``, seed 31) was never looked at while tuning (``--misses`` prints the other two thirds'
  misses only) and is reported on its own.
- *Frozen* sets, every tests/data/routing_frozen*.jsonl present (none: the report says so; a new one is picked up
  by dropping it in): written blind, never tuned on, never looked at by whoever tunes (``--misses`` never prints
  them). ACT rows name the expected skill, checked against the router's skill hint (services/router/skills.py).
Targets (issues 3 and 31): frozen overall >= 0.95, ACT >= 0.95, CLARIFY >= 0.90, no real message to
IGNORE; tuning set >= 0.996; routing p99 (embedding given) <= 1 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from services.embeddings import BACKEND_NAMES, for_requests, load_embedder
from services.router.mode_router import ModeRouter, context_from_record
from services.router.signals import MODES
from services.router.skills import skill_hint
from services.settings import Settings

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
ROUTING_SET = DATA / "routing_set.jsonl"


def _by_number(path: Path) -> tuple[int, str]:
    """Sets in the order they were written: routing_tuning10 after routing_tuning9, not after routing_tuning1."""
    digits = re.sub(r"\D", "", path.stem)
    return (int(digits) if digits else 0, path.stem)


TUNING_SETS = sorted(DATA.glob("routing_tuning*.jsonl"), key=_by_number)  # once frozen, now tuned on (see above)
FROZEN_SETS = sorted(DATA.glob("routing_frozen*.jsonl"), key=_by_number)  # each reported apart; never tuned on
HELD_OUT_SEED = 31
# The tuning set's first 494 lines are the set of issue 3, with a held-out fifth; the lines after them were
# written for issue 31's commands and every one of them was looked at while tuning (none is held out).
FIRST_LINES = 494


def held_out(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every 5th line of the tuning set's first ``FIRST_LINES``: the lines tuning never looked at."""
    return [row for index, row in enumerate(rows[:FIRST_LINES]) if index % 5 == 4]


def held_out_third(rows: list[dict[str, Any]]) -> set[int]:
    """Line indices of a fixed random third of a once-frozen set: tuning never looked at them."""
    return set(random.Random(HELD_OUT_SEED).sample(range(len(rows)), len(rows) // 3))


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The labelled rows of a JSON-lines set: text, mode, optional skill and context."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class Scores:
    """Routing outcomes of one labelled set: the confusion counts, skill checks and the misses."""

    confusion: Counter = field(default_factory=Counter)
    skills: Counter = field(default_factory=Counter)  # ("right" | "wrong", expected skill) for ACT rows routed to ACT
    misses: list[tuple[int, dict[str, Any], str, str | None]] = field(default_factory=list)

    def accuracy(self) -> float:
        total = sum(self.confusion.values())
        return sum(self.confusion[(mode, mode)] for mode in MODES) / total if total else 0.0

    def recall(self, mode: str) -> float:
        total = sum(self.confusion[(mode, got)] for got in MODES)
        return self.confusion[(mode, mode)] / total if total else 0.0

    def count(self, mode: str) -> tuple[int, int]:
        return self.confusion[(mode, mode)], sum(self.confusion[(mode, got)] for got in MODES)

    def real_to_ignore(self) -> int:
        """Messages labelled anything but IGNORE that were routed to IGNORE (a person ignored)."""
        return sum(self.confusion[(mode, "IGNORE")] for mode in MODES if mode != "IGNORE")


def evaluate(router: ModeRouter, rows: list[dict[str, Any]], embedder: Any = None) -> Scores:
    """Route every row (embedding it when an embedder is given) and score mode and skill."""
    scores = Scores()
    for index, row in enumerate(rows):
        embedding = embedder.embed(row["text"]) if embedder is not None and row["text"].strip() else None
        decision = router.route(context_from_record(row["text"], row.get("context"), embedding))
        scores.confusion[(row["mode"], decision.mode)] += 1
        skill = skill_hint(row["text"], decision.signals) if decision.mode == "ACT" else None
        if row.get("skill") and decision.mode == "ACT":
            scores.skills[("right" if skill == row["skill"] else "wrong", row["skill"])] += 1
        wrong_skill = row.get("skill") and decision.mode == "ACT" and skill != row["skill"]
        if decision.mode != row["mode"] or wrong_skill:
            scores.misses.append((index, row, decision.mode, skill))
    return scores


def summary(title: str, scores: Scores) -> str:
    """Overall, per mode, ACT, CLARIFY, messages sent to IGNORE and (where labelled) the skill."""
    lines = [f"{title}: overall {scores.accuracy():.3f} on {sum(scores.confusion.values())} messages"]
    lines.append("  per mode: " + "  ".join(
        f"{mode} {scores.recall(mode):.3f} ({'/'.join(map(str, scores.count(mode)))})" for mode in MODES))
    real = sum(scores.count(mode)[1] for mode in MODES if mode != "IGNORE")
    lines.append(f"  ACT {scores.recall('ACT'):.3f}   CLARIFY {scores.recall('CLARIFY'):.3f}   "
                 f"real messages sent to IGNORE: {scores.real_to_ignore()} of {real}")
    if scores.skills:
        right = sum(n for (verdict, _), n in scores.skills.items() if verdict == "right")
        per_skill = Counter()
        for (verdict, skill), n in scores.skills.items():
            per_skill[skill] += n if verdict == "right" else 0
        totals = Counter()
        for (_, skill), n in scores.skills.items():
            totals[skill] += n
        lines.append(f"  skill of ACT rows routed to ACT: {right}/{sum(scores.skills.values())}  (" + ", ".join(
            f"{skill} {per_skill[skill]}/{totals[skill]}" for skill in sorted(totals)) + ")")
    return "\n".join(lines)


def misses_text(scores: Scores) -> str:
    return "\n".join(f"  line {index + 1}: {row['text']!r} expected {row['mode']}"
                     f"{'/' + row['skill'] if row.get('skill') else ''} got {got}{'/' + str(skill) if skill else ''}"
                     for index, row, got, skill in scores.misses)


def percentiles(samples_ms: list[float]) -> str:
    p50, p95, p99 = np.percentile(samples_ms, [50, 95, 99])
    return f"p50 {p50:7.3f} ms   p95 {p95:7.3f} ms   p99 {p99:7.3f} ms   max {max(samples_ms):7.3f} ms"


def accuracy_report(router: ModeRouter, embedder: Any, show_misses: bool, frozen_too: bool, configs_dir: Path) -> None:
    tuning = load_rows(ROUTING_SET)
    scores = evaluate(router, tuning, embedder)
    held = evaluate(router, held_out(tuning), embedder)
    first = evaluate(router, tuning[:FIRST_LINES], embedder)
    print(summary(f"tuning set {ROUTING_SET.name}", scores))
    print(f"  its first {FIRST_LINES} lines (issue 3's set) {first.accuracy():.3f}, their held-out fifth "
          f"{held.accuracy():.3f} on {sum(held.confusion.values())}")
    if show_misses and scores.misses:
        print(misses_text(scores))
    for path in TUNING_SETS:
        rows = load_rows(path)
        hidden = held_out_third(rows)
        print(summary(f"tuning set {path.name} (once frozen, now tuned on)", evaluate(router, rows, embedder)))
        kept = [index for index in range(len(rows)) if index not in hidden]
        seen = evaluate(router, [rows[index] for index in kept], embedder)
        seen.misses = [(kept[index], row, got, skill) for index, row, got, skill in seen.misses]
        print(summary("  its two tuned thirds", seen).replace("\n", "\n  "))
        print(summary(f"  its held-out third (seed {HELD_OUT_SEED}, never looked at)",
                      evaluate(router, [rows[index] for index in sorted(hidden)], embedder)).replace("\n", "\n  "))
        if show_misses and seen.misses:
            # The held-out third's misses are never printed.
            print(misses_text(seen))
    if frozen_too and not FROZEN_SETS:
        print("frozen sets: none in tests/data (routing_frozen*.jsonl)")
    for path in FROZEN_SETS if frozen_too else []:
        print(summary(f"frozen set {path.name} (never tuned on)", evaluate(router, load_rows(path), embedder)))
    # What routing falls back to when the embedding fails (and what the pipeline tests route with).
    signals_only = ModeRouter(configs_dir)
    sets = [("tuning", tuning), *((path.stem, load_rows(path)) for path in TUNING_SETS),
            *((path.stem, load_rows(path)) for path in (FROZEN_SETS if frozen_too else []))]
    print("signals only (no embedding): " + ", ".join(
        f"{name} {evaluate(signals_only, rows).accuracy():.3f}" for name, rows in sets))


def latency_report(router: ModeRouter, embedder: Any, n: int) -> None:
    rows = load_rows(ROUTING_SET)
    messages = [rows[i % len(rows)] for i in range(n)]
    vectors = {row["text"]: embedder.embed(row["text"]) for row in rows if row["text"].strip()}
    contexts = [context_from_record(row["text"], row.get("context"), vectors.get(row["text"])) for row in messages]
    for ctx in contexts[:50]:  # warm-up: first calls pay for lazy imports and cold caches
        router.route(ctx)

    outside, inside, cpu = [], [], []
    for ctx in contexts:
        started, started_cpu = time.perf_counter(), time.thread_time()
        decision = router.route(ctx)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        outside.append((time.perf_counter() - started) * 1000)
        inside.append(decision.latency_ms)
    print(f"routing only (signals + scoring, embedding given)    {percentiles(outside)}")
    print(f"  as recorded in RoutingDecision.latency_ms          {percentiles(inside)}")
    # CPU time of the routing thread: what routing costs, apart from waiting for a core on a loaded machine.
    print(f"  CPU time of the routing thread                     {percentiles(cpu)}")

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="messages to time (the tuning set, cycled)")
    parser.add_argument("--embedder", default="auto", choices=BACKEND_NAMES)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--misses", action="store_true",
                        help="print the tuning sets' misses (never a frozen set's or a held-out line's)")
    parser.add_argument("--tuning-only", action="store_true", help="while tuning: leave the frozen sets out")
    parser.add_argument("--no-timing", action="store_true", help="accuracy only")
    args = parser.parse_args()

    settings = Settings.from_env()
    # No cache: the sets repeat when cycled, and every message must pay for its own embedding.
    embedder = load_embedder(args.embedder, cache_size=0, threads=args.threads, graph_dir=settings.models_dir)
    embedder = for_requests(embedder)  # a message is embedded once and routed, not kept as memory
    router = ModeRouter(settings.configs_dir, embedder)
    print(f"embedder {embedder.model_id}, {args.threads} thread(s), weights {router.config.version}")
    accuracy_report(router, embedder, args.misses, frozen_too=not args.tuning_only, configs_dir=settings.configs_dir)
    if not args.no_timing:
        print(f"\n{args.n} messages from {ROUTING_SET.name}, timed")
        latency_report(router, embedder, args.n)


if __name__ == "__main__":
    main()
