"""Exchange recall by turns: candidate lines from BM25 and from the vector arm, and the span each returns.

A candidate is one line (turn). Its lexical signal is its own BM25 plus, weighted by
``reply_context_weight``, the BM25 of the line it replies to (an answer often shares no word
with the question but its prompt does) and, weighted by ``nearby_weight``, the best BM25 within
``context_window`` lines (a conversation stays on a topic for a few turns); its vector signal is
the similarity of its exchange, mixed with the mean over the lines around it (``context_sim_weight``;
the same ``context_window``) (and, for a turn of the speaker the query names, its own similarity
to the query without the name: ``services.memory.speakers``). Returned, it is a span: the line and
the line it replies to (``span_replied_to``: "always", or "unmatched" = only when the line itself
holds none of the query's words), never a turn already shown by a better hit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from services.memory import lineterms, sidearms, speakers, turns
from services.memory.config import RecallConfig
from services.memory.search import Candidate
from services.memory.timewords import Window


def gather(session: Session, user_id: str, terms: lineterms.LineTerms, qvec: np.ndarray | None,
           window: Window | None, cfg: RecallConfig, excluded: set[int], speaker: speakers.NamedSpeaker | None = None,
           lexical: list[int] | None = None, exchange_ids: list[int] | None = None,
           speaker_ids: list[int] | None = None) -> list[Candidate]:
    """Line candidates of the lexical, vector, speaker and time-window arms and the lines around them, scored.

    ``lexical``: the BM25 arm's lines (``turns.lexical_lines``) when the caller found them already; else the arm
    runs inside window_rows' statement. ``exchange_ids``: the exchange arms' ids likewise (``sidearms``), and
    ``speaker_ids`` the speaker arm's lines."""
    # Every arm runs inside window_rows' statement: one round trip where there were two to four.
    params: dict[str, Any] = {"line_limit": cfg.line_candidates, "limit": cfg.candidates}
    if lexical is not None:
        seed_arms = ["SELECT unnest(CAST(:lexical_ids AS bigint[]))"] if lexical else []
        params["lexical_ids"] = lexical
    else:
        seed_arms = [turns.lexical_lines_sql(terms, cfg, params, "line_limit")] if terms.terms else []
    if speaker is not None and cfg.speaker_weight > 0:
        if speaker_ids is not None:  # found on the second connection, beside the exchange arms
            seed_arms += ["SELECT unnest(CAST(:speaker_ids AS bigint[]))"] if speaker_ids else []
            params["speaker_ids"] = speaker_ids
        elif speakers.searches_turns(speaker, cfg):
            seed_arms.append(speakers.speaker_lines_sql())
            params["spk_limit"] = cfg.speaker_candidates
    else:
        speaker = None
    if exchange_ids is not None:  # found on a second connection meanwhile (services/memory/sidearms.py)
        exchange_arms = [sidearms.IDS_SQL] if exchange_ids else []
        params["exchange_ids"] = exchange_ids
    else:
        exchange_arms = sidearms.arms_sql(qvec, window, cfg, params, terms.terms)
    # Candidates are the seeds (with every line of those exchanges) and the turns right before and after
    # them (an answer next to a match); each needs its own context_window around it, hence the reach.
    rows = turns.window_rows(session, user_id, seed_arms, exchange_arms, max(cfg.context_window + 1, 2), qvec, terms,
                             cfg, (speaker.name, speaker.vector) if speaker is not None else None, params)
    return line_candidates(rows, excluded, terms.max_score, cfg)


def line_candidates(rows: turns.LineRows, excluded: set[int], scale: float, cfg: RecallConfig) -> list[Candidate]:
    """The candidate lines of ``window_rows``' rows with their signals (``scale``: the BM25 of a line holding every
    query term), each carrying the line it replies to (``p_`` columns), in line id order."""
    if not len(rows):
        return []
    positions = _candidate_positions(rows, excluded)
    sims, lexes = context_signals(rows.floats("sim"), rows.floats("lex"), rows.previous, positions, scale, cfg)
    return [LineCandidate(rows, position, None if math.isnan(sim) else sim, lex)
            for position, sim, lex in zip(positions.tolist(), sims.tolist(), lexes.tolist(), strict=True)]


class LineCandidate(Candidate):
    """A candidate turn of ``window_rows``' rows. Its ``row`` (a dict of its columns with its exchange's texts and
    the replied-to line's ``p_`` columns, what a span is made of) is made when first read: scoring reads three
    columns of every candidate, and only the few recall returns need the rest (a dict each for ~280 candidates
    and the lines they reply to cost ~1.5 ms a recall)."""

    def __init__(self, rows: turns.LineRows, position: int, sim: float | None, lex: float) -> None:
        self._rows, self._position, self._row = rows, position, None
        own = rows.exchange_columns(position)
        salience = own[turns.SALIENCE]
        self.kind, self.id = "exchange", int(rows.rows[position][rows.index["exchange_id"]])
        self.at, self.sim, self.lex = own[turns.AT], sim, lex
        self.salience = None if salience is None else float(salience)
        self.access = int(own[turns.ACCESS] or 0)

    @property  # type: ignore[override]
    def row(self) -> dict[str, Any]:
        if self._row is None:
            self._row = self._rows.row(self._position)
            before = int(self._rows.previous[self._position])
            _attach_replied_to(self._row, self._rows.row(before) if before >= 0 else None)
        return self._row

    @row.setter
    def row(self, value: dict[str, Any]) -> None:
        self._row = value

    def _column(self, key: str) -> Any:
        return self._rows.rows[self._position][self._rows.index[key]]

    def turn_text(self) -> str | None:
        return self._column("text")

    def speaker(self) -> str | None:
        return self._column("speaker")

    def speaker_similarity(self) -> float | None:
        return self._column("speaker_sim")

    def line_id(self) -> int:
        return self._column("id")

    def turn_columns(self) -> tuple[str | None, str | None, float | None, int]:
        return self._rows.turn_of(self._rows.rows[self._position])  # type: ignore[misc]


def _candidate_positions(rows: turns.LineRows, excluded: set[int]) -> np.ndarray:
    """The rows that are candidates, in line id order: the seeds and the line right before and after each in its
    thread (an answer next to a match), except those of excluded exchanges."""
    seed = np.array(rows.column("seed"), dtype=bool)
    following = _following(rows.previous)
    wanted = seed.copy()
    before = rows.previous[seed]
    wanted[before[before >= 0]] = True
    after = following[seed]
    wanted[after[after >= 0]] = True
    if excluded:
        wanted &= ~np.isin(np.array(rows.column("exchange_id"), dtype=np.int64), list(excluded))
    positions = np.flatnonzero(wanted)
    ids = np.array(rows.column("id"), dtype=np.int64)[positions]
    return positions[np.argsort(ids, kind="stable")]


def _following(previous: np.ndarray) -> np.ndarray:
    """Each row's next row in its thread (−1: none), from each row's previous one."""
    following = np.full(len(previous), -1)
    has_before = previous >= 0
    following[previous[has_before]] = np.flatnonzero(has_before)
    return following


def context_signals(sim: np.ndarray, lex: np.ndarray, previous: np.ndarray, positions: np.ndarray, scale: float,
                    cfg: RecallConfig) -> tuple[np.ndarray, np.ndarray]:
    """The vector and lexical signals of the rows at ``positions`` (NaN: no vector), from every fetched row's
    exchange similarity ``sim`` (NaN: none) and BM25 ``lex``; ``previous``: each row's previous row in its thread
    (−1: none; a thread's rows are consecutive, in order).

    Vector: its exchange's similarity, mixed (context_sim_weight) with the mean over the exchanges of the lines
    within context_window (a turn in a stretch of conversation about the question's topic counts more). Lexical:
    its own BM25, plus reply_context_weight × the replied-to line's and nearby_weight × the best within
    context_window (topic continuity), as a share of ``scale``, at most 1. Sums run in one fixed order (the
    line, the lines before it nearest first, then those after it) and every operation as the scalar formula
    writes it, so each float equals the one computed line by line (tests/test_recall_arrays.py)."""
    following = _following(previous)
    near = []  # the rows within context_window before each line (nearest first), then after it; −1: none
    for step in (previous, following):
        at = positions
        for _ in range(cfg.context_window):
            at = np.where(at >= 0, step[np.maximum(at, 0)], -1)
            near.append(at)
    own_sim, own_lex = sim[positions], lex[positions]
    total, counted = np.where(np.isnan(own_sim), 0.0, own_sim), np.ones(len(positions))
    best = np.full(len(positions), -np.inf)
    for at in near:
        inside = at >= 0
        value = np.where(inside, sim[np.maximum(at, 0)], np.nan)
        has = ~np.isnan(value)
        total = np.where(has, total + np.where(has, value, 0.0), total)
        counted += has
        best = np.where(inside, np.maximum(best, lex[np.maximum(at, 0)]), best)
    weight = cfg.context_sim_weight
    # As written in the scalar form: (1 − w) × own + w × Σ / n, i.e. (w × Σ) / n.
    sims = (1 - weight) * own_sim + weight * total / counted if weight > 0 else own_sim.copy()
    replied = previous[positions]
    context = np.where(replied >= 0, lex[np.maximum(replied, 0)], 0.0)
    nearby = np.where(np.isinf(best), 0.0, best)
    score = own_lex + cfg.reply_context_weight * context + cfg.nearby_weight * nearby
    return sims, np.minimum(1.0, score / scale)


_REPLIED_COLUMNS = tuple((column, f"p_{column}") for column in
                         ("exchange_id", "speaker", "text", "external_id", "occurred_at", "lex"))


def _attach_replied_to(row: dict[str, Any], replied: dict[str, Any] | None) -> None:
    """The replied-to line's columns on the row (``p_``-prefixed), for the span."""
    if replied is None:
        for _, prefixed in _REPLIED_COLUMNS:
            row[prefixed] = None
        row["p_id"] = None
        return
    for column, prefixed in _REPLIED_COLUMNS:
        row[prefixed] = replied[column]


class SpanPicker:
    """Turns each exchange candidate, best first, into the lines its hit holds."""

    def __init__(self, cfg: RecallConfig, excluded: set[int]) -> None:
        self.cfg = cfg
        self.excluded = excluded
        self.covered: set[int] = set()  # line ids already shown

    def take(self, candidate: Candidate) -> list[dict[str, Any]]:
        """The lines of this candidate's hit, or [] when it would show nothing new."""
        row = candidate.row
        if row["id"] in self.covered:
            return []
        lines = [turns.line_dict(row)]
        if self._with_replied_to(row):
            lines.insert(0, turns.line_dict(row, "p_"))
        self.covered.update(line["line_id"] for line in lines)
        return lines

    def _with_replied_to(self, row: dict[str, Any]) -> bool:
        if row["p_id"] is None or row["p_exchange_id"] in self.excluded or row["p_id"] in self.covered:
            return False
        if self.cfg.span_replied_to == "always":
            return True
        # Only a turn holding none of the query's words needs its prompt to be understood ("Yes, twice!");
        # a turn that matches on its own is a whole answer, and its prompt would take another turn's place.
        return float(row["lex"]) <= 0
