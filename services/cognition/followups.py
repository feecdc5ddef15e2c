"""What the person said next: a routing decision paired with the following turn of its thread.

The next message is the best evidence a route was wrong or right: "no, I meant…" or the same
request said again means the mode missed; "yes", "thanks, that helps" means it fit. The
labels are deterministic so calibration never needs an LLM.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db import Exchange
from services.db import RoutingDecision as DecisionRow
from services.router.feedback import detect_feedback
from services.text import content_words, reply_kind

LABELS = ("correction", "rephrase", "confirmation", "continued", "silent")
MISROUTE_LABELS = frozenset({"correction", "rephrase"})


@dataclass(frozen=True)
class Turn:
    request_id: str
    user_text: str
    reply: str
    created_at: dt.datetime


@dataclass(frozen=True)
class Followup:
    label: str
    turn: Turn | None  # the next message, None when the person said nothing more in time
    similarity: float | None


def next_turns(db: Session, decisions: list[DecisionRow], within: dt.timedelta) -> dict[int, tuple[Turn, Turn | None]]:
    """decision id → (its own turn, the thread's next turn within ``within`` or None)."""
    exchange_ids = [d.exchange_id for d in decisions if d.exchange_id is not None]
    if not exchange_ids:
        return {}
    own = {row.id: row for row in db.execute(
        select(Exchange.id, Exchange.thread_id, Exchange.request_id, Exchange.user_text, Exchange.reply,
               Exchange.created_at).where(Exchange.id.in_(exchange_ids)))}
    result: dict[int, tuple[Turn, Turn | None]] = {}
    for decision in decisions:
        row = own.get(decision.exchange_id)
        if row is None:
            continue
        later = db.execute(
            select(Exchange.request_id, Exchange.user_text, Exchange.reply, Exchange.created_at)
            .where(Exchange.thread_id == row.thread_id, Exchange.created_at > row.created_at,
                   Exchange.created_at <= row.created_at + within)
            .order_by(Exchange.created_at, Exchange.id).limit(1)
        ).first()
        result[decision.id] = (_turn(row), _turn(later) if later is not None else None)
    return result


def _turn(row: object) -> Turn:
    return Turn(row.request_id, row.user_text, row.reply, row.created_at)  # type: ignore[attr-defined]


def word_overlap(left: str, right: str) -> float:
    """Jaccard similarity of two texts' content words (0 when either has none)."""
    a, b = set(content_words(left)), set(content_words(right))
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def label(own: Turn, nxt: Turn | None, recorded_feedback: str | None, rephrase_similarity: float) -> Followup:
    """The follow-up's label: correction, rephrase, confirmation, continued, or silent."""
    if nxt is None:
        return Followup("correction" if recorded_feedback == "negative" else "silent", None, None)
    similarity = round(word_overlap(own.user_text, nxt.user_text), 4)
    feedback = detect_feedback(nxt.user_text) or recorded_feedback
    if feedback == "negative":
        return Followup("correction", nxt, similarity)
    if similarity >= rephrase_similarity:
        return Followup("rephrase", nxt, similarity)
    if feedback == "positive" or reply_kind(nxt.user_text) == "confirm":
        return Followup("confirmation", nxt, similarity)
    return Followup("continued", nxt, similarity)
