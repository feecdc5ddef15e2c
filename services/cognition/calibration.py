"""Triage calibration: how often the router missed, judged by what the person said next.

Every routing decision old enough for its follow-up window to have passed is labelled once
(``routing_followups``): correction ("no, I meant…"), rephrase (the same request again),
confirmation, continued, or silent. Corrections and rephrasings are misroutes. Each run
stores the misroute rate over its window, overall and per mode (``triage_calibrations``);
routing reflection reviews the misroute-labelled decisions first and shows the label to the
LLM, and the regulator records the rate next to every weight change. No LLM call.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.cognition.config import CalibrationConfig, cognition_config
from services.cognition.followups import MISROUTE_LABELS, label, next_turns
from services.cognition.models import RoutingFollowup, TriageCalibration
from services.db import RoutingDecision as DecisionRow
from services.db import insert
from services.service_call import ServiceCall, ServiceResult

BATCH = 500
MAX_PER_RUN = 20_000


def run(call: ServiceCall) -> ServiceResult:
    """Label the window's unlabelled decisions, then store the window's misroute rate."""
    context = call.context
    config = cognition_config(context).calibration
    now = call.now()
    with context.sessions.begin() as db:
        done = db.scalar(select(TriageCalibration).where(TriageCalibration.fire_id == call.fire_id))
        if done is not None:
            return ServiceResult.ran(labelled=0, decisions=done.decisions, misroute_rate=done.misroute_rate,
                                     rerun=True)
    window_end = now - dt.timedelta(seconds=config.followup_within_s)
    window_start = window_end - dt.timedelta(hours=config.window_h)
    labelled = 0
    while labelled < MAX_PER_RUN:
        with context.sessions.begin() as db:
            count = label_batch(db, call.fire_id, window_start, window_end, config, now)
        labelled += count
        if count < BATCH:
            break
    with context.sessions.begin() as db:
        summary = summarise(db, window_start, window_end)
        db.execute(insert(TriageCalibration).values(fire_id=call.fire_id, window_start=window_start,
                                                    window_end=window_end, created_at=now, **summary)
                   .on_conflict_do_nothing(index_elements=["fire_id"]))
    if not summary["decisions"]:
        return ServiceResult.skipped("no routing decisions in the window", labelled=labelled)
    return ServiceResult.ran(labelled=labelled, decisions=summary["decisions"], misroutes=summary["misroutes"],
                             misroute_rate=summary["misroute_rate"])


def label_batch(db: Session, fire_id: str, start: dt.datetime, end: dt.datetime, config: CalibrationConfig,
                now: dt.datetime) -> int:
    """Label up to ``BATCH`` unlabelled decisions of the window; returns how many."""
    labelled = select(RoutingFollowup.decision_id)
    decisions = list(db.scalars(
        select(DecisionRow).where(DecisionRow.created_at >= start, DecisionRow.created_at < end,
                                  DecisionRow.exchange_id.is_not(None), DecisionRow.id.not_in(labelled))
        .order_by(DecisionRow.created_at).limit(BATCH)))
    pairs = next_turns(db, decisions, dt.timedelta(seconds=config.followup_within_s))
    rows = []
    for decision in decisions:
        own, nxt = pairs.get(decision.id, (None, None))
        if own is None:
            continue
        found = label(own, nxt, decision.feedback, config.rephrase_similarity)
        rows.append({"decision_id": decision.id, "user_id": decision.user_id, "label": found.label,
                     "follow_request_id": found.turn.request_id if found.turn else None,
                     "similarity": found.similarity, "fire_id": fire_id, "created_at": now})
    if rows:
        db.execute(insert(RoutingFollowup).values(rows).on_conflict_do_nothing(index_elements=["decision_id"]))
    return len(decisions)


def summarise(db: Session, start: dt.datetime, end: dt.datetime) -> dict[str, Any]:
    """Decisions, misroutes and the rate over the window, with counts per label and per mode."""
    rows = db.execute(select(DecisionRow.mode, RoutingFollowup.label)
                      .join(RoutingFollowup, RoutingFollowup.decision_id == DecisionRow.id)
                      .where(DecisionRow.created_at >= start, DecisionRow.created_at < end)).all()
    by_label = Counter(found for _, found in rows)
    per_mode: dict[str, Counter[str]] = defaultdict(Counter)
    for mode, found in rows:
        per_mode[mode]["decisions"] += 1
        per_mode[mode]["misroutes"] += found in MISROUTE_LABELS
    misroutes = sum(by_label[name] for name in MISROUTE_LABELS)
    return {
        "decisions": len(rows),
        "misroutes": misroutes,
        "misroute_rate": round(misroutes / len(rows), 4) if rows else None,
        "by_label": dict(by_label),
        "by_mode": {mode: {"decisions": c["decisions"], "misroutes": c["misroutes"],
                           "rate": round(c["misroutes"] / c["decisions"], 4)} for mode, c in sorted(per_mode.items())},
    }


def latest_misroute_rate(db: Session) -> float | None:
    """The newest calibration's misroute rate (None before the first one, or for an empty window)."""
    return db.scalar(select(TriageCalibration.misroute_rate).order_by(TriageCalibration.created_at.desc(),
                                                                      TriageCalibration.id.desc()).limit(1))
