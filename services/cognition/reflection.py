"""Routing reflection: the LLM reviews sampled routing decisions and their follow-ups.

Runs only when the RQ queues are idle, and makes no LLM call when there is nothing to review.
Decisions old enough for a follow-up are sampled, the ones calibration labelled as misroutes
first; one JSON verdict per decision ("fit", "better_mode", "reason") is stored once per
decision (``routing_reviews``). A misfit with a better mode becomes pressure per signal
(``routing_pressure``): for every signal the decision saw, the better mode's weight is pushed up
and the chosen mode's weight down, in proportion to the signal's value. The regulator turns
that pressure into bounded weight changes.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from services.cognition.config import ReflectionConfig, cognition_config
from services.cognition.followups import MISROUTE_LABELS, Turn, next_turns
from services.cognition.gate import busy_queues
from services.cognition.models import RoutingFollowup, RoutingPressure, RoutingReview
from services.db import RoutingDecision as DecisionRow
from services.db import insert
from services.errors import LLMError
from services.router.config import known_signals
from services.router.signals import MODES
from services.service_call import ServiceCall, ServiceResult
from services.text import truncate

logger = logging.getLogger(__name__)

BIAS = "bias"
TEXT_CHARS = 400


def run(call: ServiceCall) -> ServiceResult:
    """Review up to ``max_reviews_per_run`` unreviewed decisions while the system is idle."""
    context = call.context
    config = cognition_config(context).reflection
    now = call.now()
    with context.sessions.begin() as db:
        earlier = db.scalar(select(func.count()).where(RoutingReview.fire_id == call.fire_id))
    if earlier:  # a rerun of this fire: its sample was reviewed already
        return ServiceResult.ran(reviewed=0, misfits=0, failed=0, rerun=True)
    busy = busy_queues(context.redis)
    if busy:
        return ServiceResult.skipped(f"queues busy: {busy}")
    with context.sessions.begin() as db:
        sample = sample_decisions(db, now, config)
        if not sample:
            return ServiceResult.skipped("no routing decisions to review")
        within = dt.timedelta(seconds=cognition_config(context).calibration.followup_within_s)
        pairs = next_turns(db, [decision for decision, _ in sample], within)
    reviewed = misfits = 0
    errors: list[str] = []
    for decision, followup_label in sample:
        if decision.id not in pairs:
            continue
        try:
            verdict, model = ask(context, decision, pairs[decision.id], followup_label)
        except LLMError as exc:
            logger.warning("reflection on decision %s failed: %s", decision.id, exc)
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        with context.sessions.begin() as db:
            if store(db, call.fire_id, decision, followup_label, verdict, model, now):
                reviewed += 1
                misfits += not verdict["fit"]
    if errors and not reviewed:
        return ServiceResult("failed", "; ".join(errors[:3]), {"sampled": len(sample)})
    return ServiceResult.ran(reviewed=reviewed, misfits=misfits, failed=len(errors))


def sample_decisions(db: Session, now: dt.datetime, config: ReflectionConfig) -> list[tuple[DecisionRow, str | None]]:
    """Unreviewed decisions old enough for a follow-up, misroute-labelled first, then newest."""
    reviewed = select(RoutingReview.decision_id)
    suspect = case((RoutingFollowup.label.in_(MISROUTE_LABELS), 0), else_=1)
    rows = db.execute(
        select(DecisionRow, RoutingFollowup.label)
        .outerjoin(RoutingFollowup, RoutingFollowup.decision_id == DecisionRow.id)
        .where(DecisionRow.created_at >= now - dt.timedelta(hours=config.lookback_h),
               DecisionRow.created_at <= now - dt.timedelta(seconds=config.min_age_s),
               DecisionRow.exchange_id.is_not(None), DecisionRow.id.not_in(reviewed))
        .order_by(suspect, DecisionRow.created_at.desc()).limit(config.max_reviews_per_run)
    ).all()
    return [(decision, found) for decision, found in rows]


def ask(context: Any, decision: DecisionRow, turns: tuple[Turn, Turn | None],
        followup_label: str | None) -> tuple[dict[str, Any], str]:
    """The LLM's verdict, normalised: fit (bool), better_mode (a mode other than the chosen one, or None)."""
    own, nxt = turns
    prompt = context.prompts.render(
        "routing-reflection", message=truncate(own.user_text, TEXT_CHARS), mode=decision.mode,
        reply=truncate(own.reply, TEXT_CHARS) or "(no reply)",
        followup=truncate(nxt.user_text, TEXT_CHARS) if nxt else "(nothing)", label=followup_label or "unknown",
    )
    data, completion = context.llm.complete_json("reflection", [{"role": "user", "content": prompt}])
    return normalise(data, decision.mode), completion.model


def normalise(data: dict[str, Any], chosen: str) -> dict[str, Any]:
    """A verdict the rest can trust; a missing or unreadable "fit" counts as a fit (no pressure)."""
    fit_raw = data.get("fit", True)
    fit = fit_raw if isinstance(fit_raw, bool) else str(fit_raw).strip().lower() not in ("false", "no", "0")
    better = str(data.get("better_mode") or "").strip().strip(".\"'").upper()
    better_mode = better if not fit and better in MODES and better != chosen else None
    return {"fit": fit, "better_mode": better_mode, "reason": str(data.get("reason") or "")[:500]}


def pressure_rows(signals: dict[str, Any], chosen: str, better: str) -> list[dict[str, Any]]:
    """Per signal the decision saw: push ``better`` up and ``chosen`` down by the signal's value.

    Only bounded signals (values in [-1, 1]) take part: raw counts such as ``char_len`` would
    drown every other signal and no weight reads them.
    """
    allowed = known_signals()
    values = {name: float(value) for name, value in signals.items()
              if name in allowed and name != "embedding_used" and isinstance(value, int | float)
              and not isinstance(value, bool) and value != 0 and -1.0 <= value <= 1.0}
    values[BIAS] = 1.0
    rows = []
    for name, value in sorted(values.items()):
        rows.append({"mode": better, "signal": name, "pressure": round(value, 4)})
        rows.append({"mode": chosen, "signal": name, "pressure": round(-value, 4)})
    return rows


def store(db: Session, fire_id: str, decision: DecisionRow, followup_label: str | None, verdict: dict[str, Any],
          model: str, now: dt.datetime) -> bool:
    """The review and its pressure, once per decision; False when another run stored it first."""
    review_id = db.scalar(
        insert(RoutingReview).values(
            decision_id=decision.id, user_id=decision.user_id, fire_id=fire_id, chosen_mode=decision.mode,
            fit=verdict["fit"], better_mode=verdict["better_mode"], reason=verdict["reason"],
            followup_label=followup_label, model=model, created_at=now,
        ).on_conflict_do_nothing(index_elements=["decision_id"]).returning(RoutingReview.id))
    if review_id is None:
        return False
    if verdict["better_mode"]:
        rows = pressure_rows(decision.signals or {}, decision.mode, verdict["better_mode"])
        db.execute(insert(RoutingPressure).values([{**row, "review_id": review_id, "created_at": now}
                                                   for row in rows]))
    return True
