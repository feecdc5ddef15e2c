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
from sqlalchemy import text

from services.jobs import queue_stats, worker_counts
from services.llm.health import llm_problem
from services.memory.vectors import pending_count, unembeddable_count
from services.metrics import RedisCollector
from services.migrate import current_revision
from services.queues import PROMPT_QUEUE

bp = Blueprint("health", __name__)
LLM_SERVER_ROLES = ("llm",)  # the supervised local server (consumer.py)


class LLMProbe:
    """Is the LLM answering? Its port (asked at most every ``ttl_s``), plus recent crashes and failed turns."""

    def __init__(self, base_url: str | None, ttl_s: float = 10.0, *, connection: Any = None) -> None:
        self.base_url = base_url
        self.connection = connection
        self.ttl_s = ttl_s
        self._checked_at = -ttl_s
        self._state = ""

    def state(self) -> str:
        """Return "ok", or raise with what is wrong (the health check reports it)."""
        if not self.base_url:
            raise RuntimeError("no LLM endpoint configured")
        if time.monotonic() - self._checked_at >= self.ttl_s:
            self._state = self._ask(self.base_url)
            self._checked_at = time.monotonic()
        if self._state != "ok":
            raise RuntimeError(self._state)
        problem = llm_problem(self.connection, LLM_SERVER_ROLES) if self.connection is not None else None
        if problem:
            raise RuntimeError(problem)
        return self._state

    @staticmethod
    def _ask(base_url: str) -> str:
        # urllib, not httpx: under gevent's monkey-patching httpx's transport looks for select.epoll.
        try:
            with urllib.request.urlopen(str(base_url).rstrip("/") + "/models", timeout=2.0) as response:
                return "ok" if response.status < 500 else f"HTTP {response.status}"
        except urllib.error.HTTPError as exc:
            return "ok" if exc.code < 500 else f"HTTP {exc.code}"
        except TimeoutError:
            # Connected, but no answer yet: llama.cpp's server answers one request at a time, so a
            # long generation makes it slow to list its models. Crashes and failed turns are caught below.
            return "ok"
        except (urllib.error.URLError, OSError) as exc:
            return f"unreachable: {type(exc).__name__}"


@bp.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    """200 once a chat can be taken (Redis, schema, a digest worker, the LLM), else 503 naming what is down."""
    deps = current_app.extensions["engram"]
    checks = {
        "redis": _check(lambda: deps.redis.ping() and "ok"),
        "postgres": _check(lambda: _postgres(deps)),
        "digest_workers": _check(lambda: _digest_workers(deps.redis)),
        "llm": _check(lambda: deps.llm_probe.state()),
    }
    down = [name for name, check in checks.items() if not check["ok"]]
    body = {"status": "unavailable" if down else "ok", "checks": checks, "down": down}
    return jsonify(body), 503 if down else 200


def _check(probe) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    try:
        detail = probe()
    except Exception as exc:  # a health probe reports failures, it never raises them
        return {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ok": True, "detail": detail}


def _postgres(deps) -> str:  # type: ignore[no-untyped-def]
    if current_revision(deps.engine) != deps.schema_head:
        raise RuntimeError("schema is not at the newest migration: run `engram migrate`")
    return "ok"


def _digest_workers(connection) -> str:  # type: ignore[no-untyped-def]
    workers = Worker.all(queue=Queue(PROMPT_QUEUE, connection=connection))
    if not workers:
        raise RuntimeError(f"no worker listens on {PROMPT_QUEUE}")
    return f"{len(workers)} worker(s)"


@bp.get("/metrics")
def metrics() -> Response:
    deps = current_app.extensions["engram"]
    registry = CollectorRegistry(auto_describe=True)
    registry.register(RedisCollector(deps.redis, gauges=lambda: _live_gauges(deps)))
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def _live_gauges(deps) -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    stats = queue_stats(deps.redis)
    gauges = {
        "engram_queue_depth": {f"queue={s['queue']}": float(s["queued"]) for s in stats},
        "engram_failed_jobs": {f"queue={s['queue']}": float(s["failed"]) for s in stats},
        "engram_started_jobs": {f"queue={s['queue']}": float(s["started"]) for s in stats},
        "engram_scheduled_jobs": {f"queue={s['queue']}": float(s["scheduled"]) for s in stats},
        "engram_workers": {f"queue={name}": float(count) for name, count in worker_counts(deps.redis).items()},
    }
    gauges["engram_memory_items"] = _memory_counts(deps.engine)
    pending, unembeddable = vector_backlog(deps.engine)
    gauges["engram_vectors_pending"] = {"": float(pending)}
    gauges["engram_vectors_unembeddable"] = {"": float(unembeddable)}
    return gauges


def vector_backlog(engine) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Imported exchanges still waiting for their vector (the backfill's queue; its partial index counts them),
    and those the model failed on (searchable by their words only)."""
    with engine.connect() as connection:
        return pending_count(connection), unembeddable_count(connection)


def _memory_counts(engine) -> dict[str, float]:  # type: ignore[no-untyped-def]
    counts: dict[str, float] = {}
    with engine.connect() as connection:
        for table in ("exchanges", "memory_chunks", "facts", "episodes", "topics", "routing_decisions"):
            counts[f"kind={table}"] = connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
    return counts
