"""GET /healthz and GET /metrics."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from typing import Any

from flask import Blueprint, Response, current_app, jsonify
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from rq import Queue, Worker
from rq.registry import FailedJobRegistry
from sqlalchemy import text

from services.metrics import RedisCollector
from services.migrate import is_at_head
from services.queues import ALL_QUEUES, PROMPT_QUEUE

bp = Blueprint("health", __name__)

_llm_cache: dict[str, Any] = {"at": 0.0, "state": None}


@bp.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    """200 once a chat can be taken (Redis, schema, a digest worker, the LLM), else 503."""
    deps = current_app.extensions["engram"]
    checks = {
        "redis": _check(lambda: deps.redis.ping() and "ok"),
        "postgres": _check(lambda: _postgres(deps.engine)),
        "digest_workers": _check(lambda: _digest_workers(deps.redis)),
        "llm": _check(lambda: _llm(deps.settings.openai_base_url)),
    }
    healthy = all(check["ok"] for check in checks.values())
    return jsonify({"status": "ok" if healthy else "unavailable", "checks": checks}), 200 if healthy else 503


def _check(probe) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    try:
        detail = probe()
    except Exception as exc:  # a health probe reports failures, it never raises them
        return {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ok": True, "detail": detail}


def _postgres(engine) -> str:  # type: ignore[no-untyped-def]
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))
    if not is_at_head(engine):
        raise RuntimeError("schema is not at the newest migration: run `engram migrate`")
    return "ok"


def _digest_workers(connection) -> str:  # type: ignore[no-untyped-def]
    workers = Worker.all(queue=Queue(PROMPT_QUEUE, connection=connection))
    if not workers:
        raise RuntimeError(f"no worker listens on {PROMPT_QUEUE}")
    return f"{len(workers)} worker(s)"


def _llm(base_url: str | None) -> str:
    if not base_url:
        raise RuntimeError("no LLM endpoint configured")
    now = time.monotonic()
    if _llm_cache["state"] is not None and now - _llm_cache["at"] < 10:
        state = _llm_cache["state"]
    else:
        # urllib, not httpx: under gevent's monkey-patching httpx's transport looks for select.epoll.
        try:
            with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=2.0) as response:
                state = "ok" if response.status < 500 else f"HTTP {response.status}"
        except urllib.error.HTTPError as exc:
            state = "ok" if exc.code < 500 else f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            state = f"unreachable: {type(exc).__name__}"
        _llm_cache.update(at=now, state=state)
    if state != "ok":
        raise RuntimeError(state)
    return state


@bp.get("/metrics")
def metrics() -> Response:
    deps = current_app.extensions["engram"]
    registry = CollectorRegistry(auto_describe=True)
    registry.register(RedisCollector(deps.redis, gauges=lambda: _live_gauges(deps)))
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def _live_gauges(deps) -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    depths: dict[str, float] = {}
    failed: dict[str, float] = {}
    for name in ALL_QUEUES:
        queue = Queue(name, connection=deps.redis)
        depths[f"queue={name}"] = queue.count
        failed[f"queue={name}"] = FailedJobRegistry(queue=queue).count
    gauges = {"engram_queue_depth": depths, "engram_failed_jobs": failed}
    gauges["engram_memory_items"] = _memory_counts(deps.engine)
    return gauges


def _memory_counts(engine) -> dict[str, float]:  # type: ignore[no-untyped-def]
    counts: dict[str, float] = {}
    with engine.connect() as connection:
        for table in ("exchanges", "memory_chunks", "facts", "episodes", "topics", "routing_decisions"):
            counts[f"kind={table}"] = connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
    return counts
