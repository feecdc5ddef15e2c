"""The ops page's JSON: RQ queues, workers and failed jobs (with retry), recent routing decisions.

Metrics (turns, latencies, tokens) come from ``/metrics``; this adds what a scrape cannot:
lists. Authenticated like every other data route; routing decisions are the caller's own.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Response, current_app, jsonify
from sqlalchemy import select

from api.args import int_arg
from api.auth import current_user
from api.health import vector_backlog
from services.db import Exchange, RoutingDecision
from services.errors import NotFound
from services.jobs import NotFailed, failed_jobs, queue_stats, retry_failed, workers

logger = logging.getLogger(__name__)
bp = Blueprint("ops_data", __name__, url_prefix="/ops")


@bp.get("/queues")
def queues() -> Response:
    """Queue counts from RQ's registries, the workers, and the most recent failed jobs."""
    user_id = current_user()
    deps = current_app.extensions["engram"]
    pending, unembeddable = vector_backlog(deps.engine)
    return jsonify({"queues": queue_stats(deps.redis), "workers": workers(deps.redis),
                    "failed_jobs": failed_jobs(deps.redis, user_id, operator=deps.settings.is_operator(user_id)),
                    "vectors_pending": pending, "vectors_unembeddable": unembeddable})


@bp.post("/jobs/<job_id>/retry")
def retry(job_id: str) -> Response:
    """Requeue one failed job of the caller's; 404 when it is not (or no longer) failed, or is another user's.

    A job enqueued for a person (chat digest, memory enrichment, episodes, embeddings, goal pursuits)
    carries its owner and only that user may retry it; a job owned by no user (periodic service
    runs, jobs enqueued by hand) is an operator job only the users of ``ENGRAM_OPERATORS`` may
    retry (see ``services/jobs.py``).
    """
    user_id = current_user()
    deps = current_app.extensions["engram"]
    try:
        queue = retry_failed(deps.redis, job_id, user_id, operator=deps.settings.is_operator(user_id))
    except NotFailed:
        raise NotFound(f"no failed job {job_id!r}") from None
    logger.info("failed job %s requeued on %s by %s", job_id, queue, user_id, extra={"job_id": job_id})
    return jsonify({"requeued": job_id, "queue": queue})


@bp.get("/routing")
def routing() -> Response:
    """The caller's most recent routing decisions with their scores and signals (?limit=, at most 100)."""
    limit = int_arg("limit", 20, 1, 100)
    statement = (select(RoutingDecision, Exchange.topic)
                 .join(Exchange, Exchange.id == RoutingDecision.exchange_id, isouter=True)
                 .where(RoutingDecision.user_id == current_user())
                 .order_by(RoutingDecision.id.desc()).limit(limit))
    with current_app.extensions["engram.sessions"]() as session:
        rows = session.execute(statement).all()
    return jsonify({"decisions": [_decision_dict(row, topic) for row, topic in rows]})


def _decision_dict(row: RoutingDecision, topic: str | None) -> dict[str, Any]:
    return {
        "request_id": row.request_id,
        "exchange_id": row.exchange_id,
        "mode": row.mode,
        "topic": topic,
        "confidence": row.confidence,
        "margin": row.margin,
        "scores": row.scores,
        "signals": row.signals,
        "tiebreaker_used": row.tiebreaker_used,
        "tiebreaker_result": row.tiebreaker_result,
        "latency_ms": row.latency_ms,
        "recalled": len(row.recalled or []),
        "created_at": row.created_at.isoformat(),
    }
