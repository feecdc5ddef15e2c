"""Recall's scoring: relevance fused from the vector and lexical signals, times the item's boosts, best first.

``score_candidates`` works over arrays of the few hundred candidates a recall gathers. Every float is computed
by the scalar formula's operations in its order (IEEE +, −, ×, ÷ give the same result in numpy as in Python;
the transcendental ``exp`` and ``log1p`` and the decimal ``round`` stay Python's, once per item), so scores and
order equal those of scoring one candidate at a time (tests/test_recall_arrays.py keeps that reference).
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np

from services.memory import focus, turnshape
from services.memory.config import RecallConfig
from services.memory.scored import Scored
from services.memory.search import Candidate
from services.memory.timewords import Window

NEUTRAL_SALIENCE = 0.5
NO_TIME_AGE_DAYS = 365.0  # the age of an item without a time


def score_candidates(candidates: list[Candidate], cfg: RecallConfig, has_vector: bool, window: Window | None,
                     now: dt.datetime, cue: str | None = None,
                     speaker_weight: float | None = None, asked_about: focus.Focus | None = None) -> Scored:
    """Fuse relevance, apply the boosts, and sort best first (zero-relevance candidates are dropped): a sequence
    of (score, signals, candidate).

    ``cue``: the kind of answer the query asks for (``turnshape.answer_cue``); a turn holding one scores more.
    ``speaker_weight``: the weight of a named speaker's turn's own similarity (None: ``cfg.speaker_weight``).
    ``asked_about``: the person whose words the query asks for (``focus.of_question``); their turns score more.
    A candidate's signals are put into words (a dict of rounded values) only when the caller reads it, which
    for recall is the first k or so.
    """
    speaker_weight = cfg.speaker_weight if speaker_weight is None else speaker_weight
    if not candidates:
        return Scored([], [], [], lambda i: {})
    rel = fused(candidates, cfg, has_vector)
    boosts = ItemBoosts(candidates, cfg, window, now)
    # One call per candidate for the columns of the turn it is (text, speaker, speaker similarity, id).
    texts, speakers_of, speaker_sims, line_ids = (list(column) for column in
                                                  zip(*(c.turn_columns() for c in candidates), strict=True))
    if not has_vector:
        speaker_sims = [None] * len(candidates)
    named = np.array([s is not None for s in speaker_sims], dtype=bool)
    if named.any():
        sims = np.array([float(s) if s is not None else 0.0 for s in speaker_sims])
        calibrated = np.minimum(1.0, np.maximum(0.0, (sims - cfg.sim_floor) / (cfg.sim_ceil - cfg.sim_floor)))
        rel = np.where(named, rel + speaker_weight * calibrated, rel)
    cued = np.zeros(len(candidates), dtype=bool)
    if cue is not None:
        cued = np.array([t is not None and turnshape.carries(cue, t) for t in texts], dtype=bool)
        rel = np.where(cued, rel + cfg.answer_cue_weight, rel)
    in_window = boosts.in_window()
    rel = np.where(in_window, np.maximum(rel, cfg.window_relevance), rel)
    score = rel * boosts.factors()
    asks = np.zeros(len(candidates))
    shaped = np.array([t is not None for t in texts], dtype=bool) & (cfg.question_turn_weight > 0)
    if shaped.any():  # a turn that asks seldom holds the answer
        # A turn without "?" asks nothing (question_share's own first test), told without its cache's lookup.
        asks = np.array([turnshape.question_share(t) if t is not None and "?" in t else 0.0 for t in texts])
        score = np.where(shaped, score * (1 - cfg.question_turn_weight * asks), score)
    if asked_about is not None:  # a turn of the person the query asks about
        score = score * np.array([focus.factor(who, text, asked_about)
                                  for who, text in zip(speakers_of, texts, strict=True)])
    kept = np.flatnonzero(rel > 0)
    kind_rank, entity_ids = boosts.kind_ranks(), boosts.ids()
    lines = np.array(line_ids, dtype=np.int64)
    order = kept[np.lexsort((lines[kept], entity_ids[kept], kind_rank[kept], -score[kept]))].tolist()

    def signals(i: int) -> dict[str, float]:
        found = boosts.signal_words(i)
        if speaker_sims[i] is not None:  # a turn of the person the query names: its own similarity counts too
            found["speaker"] = round(float(speaker_sims[i]), 4)
        if cued[i]:
            found["answer_cue"] = 1.0
        if shaped[i]:
            found["asks"] = round(float(asks[i]), 3)
        candidate = candidates[i]
        found["vector"] = round(candidate.sim, 4) if candidate.sim is not None else 0.0
        found["lexical"] = round(candidate.lex, 4)
        found["relevance"] = round(float(rel[i]), 4)
        return found

    return Scored(order, score.tolist(), candidates, signals)


class ItemBoosts:
    """The boosts of the candidates' items (an exchange's turns share its time, salience and access), computed
    once per item: recency exp(−λ·Δt), salience, access and a time window's match, each rounded as a hit shows
    it, and the factor 1 + Σ weight × signal made of the rounded ones."""

    def __init__(self, candidates: list[Candidate], cfg: RecallConfig, window: Window | None,
                 now: dt.datetime) -> None:
        keys = [(c.kind, c.id) for c in candidates]
        first: dict[tuple[str, int], Candidate] = {}
        for key, candidate in zip(keys, candidates, strict=True):
            first.setdefault(key, candidate)
        place = {key: item for item, key in enumerate(first)}
        owners = list(first.values())  # each item's first candidate
        self.owners, self.item_of = owners, np.array([place[key] for key in keys], dtype=np.int64)
        self.ages = [max(0.0, (now - c.at).total_seconds() / 86400) if c.at else NO_TIME_AGE_DAYS for c in owners]
        decay = cfg.decay_per_day
        self.recency = [round(math.exp(-decay * age), 4) for age in self.ages]
        self.salience = _salience_signals([c.salience for c in owners])
        self.access = _access_signals([c.access for c in owners], cfg)
        self.time_match = [1.0 if window and c.at and c.kind != "fact" and window[0] <= c.at < window[1] else 0.0
                           for c in owners]
        recency, salience = np.array(self.recency), np.array(self.salience)
        boost = (1 + cfg.recency_weight * recency + cfg.salience_weight * (2 * salience - 1)
                 + cfg.access_weight * np.array(self.access) + cfg.time_match_weight * np.array(self.time_match))
        self._factors = boost[self.item_of]

    def factors(self) -> np.ndarray:
        """Each candidate's boost factor."""
        return self._factors

    def in_window(self) -> np.ndarray:
        """Whether each candidate's item lies in the query's time window."""
        return np.array(self.time_match)[self.item_of] > 0

    def kind_ranks(self) -> np.ndarray:
        """Each candidate's kind's place in the kinds' alphabetical order (the order of equal scores)."""
        kinds = sorted({c.kind for c in self.owners})
        return np.array([kinds.index(c.kind) for c in self.owners], dtype=np.int64)[self.item_of]

    def ids(self) -> np.ndarray:
        return np.array([c.id for c in self.owners], dtype=np.int64)[self.item_of]

    def signal_words(self, i: int) -> dict[str, float]:
        """Candidate ``i``'s boost signals as a hit shows them."""
        item = int(self.item_of[i])
        return {"recency": self.recency[item], "age_days": round(self.ages[item], 2), "salience": self.salience[item],
                "access": self.access[item], "time_match": self.time_match[item]}


def _salience_signals(values: list[float | None]) -> list[float]:
    """Salience in 0..1 (None: neutral), rounded: once per distinct value (most exchanges have none)."""
    signal = {value: round(min(1.0, max(0.0, value if value is not None else NEUTRAL_SALIENCE)), 4)
              for value in set(values)}
    return [signal[value] for value in values]


def _access_signals(counts: list[int], cfg: RecallConfig) -> list[float]:
    """log1p(count) / log1p(saturation), at most 1, rounded: once per distinct count (most are 0)."""
    scale = math.log1p(max(1, cfg.access_saturation))
    signal = {count: round(min(1.0, math.log1p(count) / scale), 4) for count in set(counts)}
    return [signal[count] for count in counts]


def fused(candidates: list[Candidate], cfg: RecallConfig, has_vector: bool) -> np.ndarray:
    """Relevance in 0..1 per candidate: the cosine calibrated to 0..1 (``sim_floor`` → 0, ``sim_ceil`` → 1) and the
    lexical score, summed with their weights; without a query vector, the lexical score alone."""
    lexes = np.array([c.lex for c in candidates], dtype=np.float64)
    if not has_vector:
        return lexes
    sims = np.array([c.sim if c.sim is not None else 0.0 for c in candidates], dtype=np.float64)
    wv, wl = cfg.vector_weight, cfg.lexical_weight
    total = (wv + wl) or 1.0
    calibrated = np.minimum(1.0, np.maximum(0.0, (sims - cfg.sim_floor) / (cfg.sim_ceil - cfg.sim_floor)))
    return (wv * calibrated + wl * lexes) / total
