"""Recall's candidate signals and scoring over arrays (spans.line_candidates, recall.score_candidates) give the
same floats, the same order and the same signals as the line-by-line reference they replaced (kept here), on
built rows: several threads, turns without a vector, excluded exchanges, a named speaker's turns, answer cues,
question turns and a time window."""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import replace
from typing import Any

import pytest

from services.memory import turnshape
from services.memory.config import RecallConfig
from services.memory.scoring import score_candidates
from services.memory.search import Candidate
from services.memory.spans import _attach_replied_to, line_candidates
from services.memory.turns import LineRows

NOW = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
KEYS = ("id", "exchange_id", "line_thread", "speaker", "text", "external_id", "occurred_at", "lex", "sim",
        "speaker_sim", "seed", "first", "at", "salience", "access")
TEXTS = ["How was the trip to Paris?", "We went in March, twice.", "Great. Did you like it?", "I loved it.",
         "Three dogs now!", "What did you read? Anything good?", "Mostly novels.", "[shared an image: a cat]"]


def _rows(rng: random.Random, threads: int = 6) -> list[tuple[Any, ...]]:
    """Rows as window_rows returns them: in thread order, an exchange's texts on its first line only."""
    rows, line_id, exchange = [], 1000, 500
    for thread in range(threads):
        at = NOW - dt.timedelta(days=rng.uniform(0, 400))
        for _ in range(rng.randint(1, 12)):
            exchange += rng.choice([1, 1, 3])
            sim = None if rng.random() < 0.1 else round(rng.uniform(-0.1, 0.9), 6)
            salience = None if rng.random() < 0.7 else rng.random()
            access = rng.choice([0, 0, 0, 2, 30])
            started = at  # an exchange's time, shared by its lines
            for position in range(rng.randint(1, 3)):
                line_id += rng.choice([1, 2, 7])
                at += dt.timedelta(minutes=rng.randint(1, 900))
                speaker = rng.choice(["user", "assistant", "Caroline", "Mel"])
                first = position == 0  # the exchange's own columns come on its first line only
                own = (started, salience, access) if first else (None,) * 3
                rows.append((line_id, exchange, f"t{thread}", speaker, rng.choice(TEXTS), f"x{line_id}", at,
                             rng.choice([0.0, 0.0, round(rng.uniform(0, 9), 6)]), sim,
                             round(rng.uniform(0, 0.8), 6) if speaker == "Caroline" else None, rng.random() < 0.3,
                             first, *own))
    return rows


def _reference_candidates(tuples: list[tuple[Any, ...]], excluded: set[int], scale: float,
                          cfg: RecallConfig) -> list[tuple[int, float | None, float]]:
    """The line-by-line gather of round six: (line id, sim, lex) of each candidate, in line id order."""
    rows = [dict(zip(KEYS, row, strict=True)) for row in tuples]
    previous = None
    for row in rows:
        row["p_id"] = previous["id"] if previous is not None and previous["line_thread"] == row["line_thread"] else None
        previous = row
    by_id = {row["id"]: row for row in rows}
    following = {row["p_id"]: row["id"] for row in rows if row["p_id"] in by_id}

    def around(line_id: int, width: int) -> list[int]:
        found, before, after = [line_id], line_id, line_id
        for _ in range(width):
            before = by_id[before]["p_id"] if before in by_id else None
            if before is None or before not in by_id:
                break
            found.append(before)
        for _ in range(width):
            after = following.get(after)
            if after is None:
                break
            found.append(after)
        return found

    seeds = [row["id"] for row in rows if row["seed"]]
    wanted = {line for seed in seeds for line in around(seed, 1)}
    found = []
    for line_id in sorted(wanted):
        row = by_id[line_id]
        if row["exchange_id"] in excluded:
            continue
        near = around(line_id, cfg.context_window)
        sim = None
        if row["sim"] is not None:
            sims = [float(by_id[i]["sim"]) for i in near if by_id[i]["sim"] is not None]
            sim = (1 - cfg.context_sim_weight) * float(row["sim"]) + cfg.context_sim_weight * sum(sims) / len(sims)
            sim = float(row["sim"]) if cfg.context_sim_weight <= 0 else sim
        replied = by_id.get(row["p_id"]) if row["p_id"] is not None else None
        context = float(replied["lex"]) if replied is not None else 0.0
        nearby = max((float(by_id[i]["lex"]) for i in near[1:]), default=0.0)
        lex = min(1.0, (float(row["lex"]) + cfg.reply_context_weight * context + cfg.nearby_weight * nearby) / scale)
        found.append((line_id, sim, lex))
    return found


def _calibrated(sim: float, cfg: RecallConfig) -> float:
    return min(1.0, max(0.0, (sim - cfg.sim_floor) / (cfg.sim_ceil - cfg.sim_floor)))


def _reference_scores(candidates: list[Candidate], cfg: RecallConfig, window: Any, cue: str | None,
                      speaker_weight: float) -> list[tuple[float, dict[str, float], int]]:
    """The one-candidate-at-a-time scoring of round six: (score, signals, line id), best first."""
    scored = []
    for candidate in candidates:
        rel = (cfg.vector_weight * _calibrated(candidate.sim or 0.0, cfg) + cfg.lexical_weight * candidate.lex) / (
            (cfg.vector_weight + cfg.lexical_weight) or 1.0)
        age = max(0.0, (NOW - candidate.at).total_seconds() / 86400)
        salience = candidate.salience if candidate.salience is not None else 0.5
        access = min(1.0, math.log1p(candidate.access) / math.log1p(max(1, cfg.access_saturation)))
        in_window = bool(window and window[0] <= candidate.at < window[1])
        signals = {"recency": round(math.exp(-cfg.decay_per_day * age), 4), "age_days": round(age, 2),
                   "salience": round(min(1.0, max(0.0, salience)), 4), "access": round(access, 4),
                   "time_match": 1.0 if in_window else 0.0}
        boost = (1 + cfg.recency_weight * signals["recency"] + cfg.salience_weight * (2 * signals["salience"] - 1)
                 + cfg.access_weight * signals["access"] + cfg.time_match_weight * signals["time_match"])
        if candidate.row.get("speaker_sim") is not None:
            rel += speaker_weight * _calibrated(float(candidate.row["speaker_sim"]), cfg)
            signals["speaker"] = round(float(candidate.row["speaker_sim"]), 4)
        if turnshape.carries(cue, candidate.row["text"]):
            rel += cfg.answer_cue_weight
            signals["answer_cue"] = 1.0
        if signals["time_match"]:
            rel = max(rel, cfg.window_relevance)
        if rel <= 0:
            continue
        score = rel * boost
        if cfg.question_turn_weight > 0:
            asks = turnshape.question_share(candidate.row["text"])
            score *= 1 - cfg.question_turn_weight * asks
            signals["asks"] = round(asks, 3)
        signals["vector"] = round(candidate.sim, 4) if candidate.sim is not None else 0.0
        signals["lexical"] = round(candidate.lex, 4)
        signals["relevance"] = round(rel, 4)
        scored.append((score, signals, candidate))
    scored.sort(key=lambda item: (-item[0], item[2].kind, item[2].id, item[2].row["id"]))
    return [(score, signals, candidate.row["id"]) for score, signals, candidate in scored]


@pytest.mark.parametrize("seed", range(12))
def test_array_candidates_and_scores_equal_the_line_by_line_reference(seed):
    rng = random.Random(seed)
    tuples = _rows(rng)
    cfg = replace(RecallConfig(), context_sim_weight=rng.choice([0.0, 0.5, 0.3]), context_window=rng.choice([1, 2, 3]),
                  sim_floor=0.15, sim_ceil=0.75)
    excluded = {row[1] for row in rng.sample(tuples, 3)}
    scale = rng.uniform(2, 12)
    expected = _reference_candidates(tuples, excluded, scale, cfg)
    candidates = line_candidates(LineRows(KEYS, tuples), excluded, scale, cfg)
    assert [(c.row["id"], c.sim, c.lex) for c in candidates] == expected  # floats equal, not approximately
    assert len(expected) > 5
    by_id = {row[0]: dict(zip(KEYS, row, strict=True)) for row in tuples}
    for candidate in candidates:  # the row a span reads: its replied-to line's columns and its exchange's time
        replied = candidate.row["p_id"]
        assert replied is None or by_id[replied]["line_thread"] == candidate.row["line_thread"]
        own = next(row for row in tuples if row[1] == candidate.id and row[11])  # its exchange's first line
        assert (candidate.at, candidate.row["at"]) == (own[12], own[12])
        assert (candidate.salience, candidate.access) == (own[13], own[14])

    inside = rng.choice(candidates).at
    window = (inside - dt.timedelta(days=20), inside + dt.timedelta(days=20)) if seed % 2 else None
    cue = [None, "time", "number", "place"][seed % 4]
    weight = rng.choice([0.3, 0.5])
    scored = score_candidates(candidates, cfg, True, window, NOW, cue, weight)
    reference = _reference_scores(candidates, cfg, window, cue, weight)
    assert [(score, signals, c.row["id"]) for score, signals, c in scored] == reference
    assert any(s["time_match"] for _, s, _ in reference) == (window is not None)


def test_candidates_of_a_thread_carry_the_line_they_reply_to():
    tuples = [(i, i, "t", "Mel", f"line {i}", f"x{i}", NOW, float(i == 3), 0.5, None, i == 3, True, NOW, None, 0)
              for i in (1, 2, 3, 4, 5)]
    found = line_candidates(LineRows(KEYS, tuples), set(), 1.0, RecallConfig())
    assert [c.row["id"] for c in found] == [2, 3, 4]  # the seed and the line either side of it
    assert [(c.row["p_id"], c.row["p_text"]) for c in found] == [(1, "line 1"), (2, "line 2"), (3, "line 3")]
    row: dict[str, Any] = {"id": 1, "p_id": None}
    _attach_replied_to(row, None)
    assert row["p_text"] is None
