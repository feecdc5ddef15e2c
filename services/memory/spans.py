"""Exchange recall by turns: candidate lines from BM25 and from the vector arm, and the span each returns.

A candidate is one line (turn). Its lexical signal is its own BM25 plus, weighted by
``reply_context_weight``, the BM25 of the line it replies to (an answer often shares no word
with the question but its prompt does); its vector signal is the similarity of its exchange.
Returned, it is a span: the line and the line it replies to (``span_replied_to``), never a turn
already shown by a better hit. With ``neighbours`` > 0 a hit is instead its whole exchange with
that many exchanges before and after it (the older, wider shape).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from services.memory import search, turns
from services.memory.config import RecallConfig
from services.memory.search import Candidate
from services.memory.timewords import Window


def gather(session: Session, user_id: str, query: str, qvec: np.ndarray | None, window: Window | None,
           cfg: RecallConfig, excluded: set[int]) -> list[Candidate]:
    """Line candidates of the lexical, vector and time-window arms, every signal computed."""
    terms = turns.line_terms(session, user_id, query, cfg)
    line_ids = dict.fromkeys(turns.lexical_lines(session, user_id, terms, cfg.line_candidates, cfg))
    exchange_ids: dict[int, None] = {}
    if qvec is not None:
        exchange_ids.update(dict.fromkeys(search.vector_arm(session, "exchange", user_id, qvec, cfg.candidates)))
    if window is not None:
        exchange_ids.update(dict.fromkeys(search.window_arm(session, "exchange", user_id, window, qvec, terms.terms,
                                                            cfg.candidates)))
    line_ids.update(dict.fromkeys(turns.lines_of_exchanges(session, user_id, list(exchange_ids))))
    scale = terms.max_score
    candidates = []
    for row in turns.span_rows(session, user_id, list(line_ids), qvec, terms, cfg):
        if row["exchange_id"] in excluded:
            continue
        context = row["p_lex"] if row["p_exchange_id"] not in excluded else 0.0
        lex = min(1.0, (float(row["lex"]) + cfg.reply_context_weight * float(context or 0.0)) / scale)
        candidates.append(Candidate(
            kind="exchange", id=int(row["exchange_id"]), row=row, at=row["at"],
            sim=None if row["sim"] is None else float(row["sim"]), lex=lex,
            salience=None if row["salience"] is None else float(row["salience"]), access=int(row["access"] or 0)))
    return candidates


class SpanPicker:
    """Turns each exchange candidate, best first, into the lines its hit holds."""

    def __init__(self, session: Session, user_id: str, cfg: RecallConfig, excluded: set[int],
                 pool: list[tuple[float, dict[str, float], Candidate]]) -> None:
        self.cfg = cfg
        self.excluded = excluded
        self.covered: set[int] = set()  # line ids in span mode, exchange ids in neighbourhood mode
        self.around: dict[int, list[dict[str, Any]]] = {}
        self.lines: dict[int, list[dict[str, Any]]] = {}
        if cfg.neighbours > 0:
            ids = list(dict.fromkeys(c.id for _, _, c in pool if c.kind == "exchange"))
            self.around = search.neighbours(session, user_id, ids, cfg.neighbours)
            wanted = ids + [n["id"] for rows in self.around.values() for n in rows]
            self.lines = turns.lines_by_exchange(session, user_id, wanted)

    def take(self, candidate: Candidate) -> list[dict[str, Any]]:
        """The lines of this candidate's hit, or [] when it would show nothing new."""
        if self.cfg.neighbours > 0:
            return self._neighbourhood(candidate)
        row = candidate.row
        if row["id"] in self.covered:
            return []
        lines = [turns.line_dict(row)]
        replied_to = row["p_id"] is not None and row["p_exchange_id"] not in self.excluded
        if self.cfg.span_replied_to and replied_to and row["p_id"] not in self.covered:
            lines.insert(0, turns.line_dict(row, "p_"))
        self.covered.update(line["line_id"] for line in lines)
        return lines

    def _neighbourhood(self, candidate: Candidate) -> list[dict[str, Any]]:
        if candidate.id in self.covered or candidate.id in self.excluded:
            return []
        near = self.neighbours(candidate)
        ids = [n["exchange_id"] for n in near if n["side"] < 0] + [candidate.id]
        ids += [n["exchange_id"] for n in near if n["side"] > 0]
        self.covered.update(ids)
        return [line for i in ids for line in self.lines.get(i, [])]

    def neighbours(self, candidate: Candidate) -> list[dict[str, Any]]:
        """Neighbouring exchanges of a hit (neighbourhood mode only), in time order."""
        return [{"exchange_id": n["id"], "text": "\n".join(p for p in (n["user_text"], n["reply"]) if p),
                 "user_text": n["user_text"], "reply": n["reply"], "external_id": n["external_id"], "at": n["at"],
                 "side": n["side"]}
                for n in self.around.get(candidate.id, []) if n["id"] not in self.excluded]
