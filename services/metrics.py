"""Prometheus metrics kept in Redis, so every process on every host adds to one set.

Workers run as plain ``rq worker`` processes anywhere; an in-process registry would only
show the web process. So counters and histograms are Redis hashes, and ``/metrics`` turns
them, plus live gauges (queue depths, failed jobs, open streams), into Prometheus text.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import redis
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from services.supervisor import process_key

logger = logging.getLogger(__name__)

COUNTERS_KEY = "metrics:counters"  # field: json [name, labels] → value
HIST_KEY = "metrics:hist:%s"  # per histogram name; fields: json labels + "|" + bucket
# An observation increments only the bucket it falls in ("=" + bound) and the sum: two commands
# instead of one per bucket; ``/metrics`` adds them up into Prometheus' cumulative buckets.
EXACT = "="
SSE_OPEN_KEY = "metrics:sse_open"  # field: host:pid → "count|timestamp"
FLUSH_EVERY_S = 1.0  # a process writes what ``Metrics.deferred()`` blocks recorded at most this often

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
HISTOGRAMS = {
    "engram_routing_seconds": "Deterministic mode routing latency",
    "engram_classification_seconds": "Topic classification latency (embedding included)",
    "engram_llm_seconds": "LLM call latency by role",
    "engram_llm_first_token_seconds": "Time to the first streamed token by role",
    "engram_reply_seconds": "Digest job time from receipt to stored reply",
    "engram_service_seconds": "Periodic service run time by service",
}
COUNTERS = {
    "engram_chat_requests_total": "POST /chat requests by outcome",
    "engram_mode_total": "Chat turns by engagement mode",
    "engram_tokens_total": "LLM tokens by role and kind",
    "engram_job_failures_total": "Jobs that failed by queue",
    "engram_llm_fallbacks_total": "Replies that fell back to the generic message",
    "engram_memory_enrichment_failures_total": "Exchanges stored without LLM enrichment",
    "engram_service_runs_total": "Periodic service runs by service and outcome (ran, skipped, failed)",
    "engram_proactive_events_total": "Events pushed to a person's proactive stream by kind",
}


class Metrics:
    """Record counters and histograms; cheap enough for the hot path.

    Outside ``deferred()`` every record is written at once. Inside it (the digest job wraps each
    turn in one), records are added up in this process and written at most once a second (with the
    previous write more than ``flush_every_s`` ago, at the block's end; else by a timer thread when
    the second is over; and by ``flush()`` when the process closes its context): a busy worker
    writes one merged pipeline a second instead of a dozen commands per job. ``/metrics`` lags by
    at most that second; a process killed with SIGKILL loses at most its last second of records.
    """

    def __init__(self, connection: redis.Redis, flush_every_s: float = FLUSH_EVERY_S) -> None:
        self.redis = connection
        self.flush_every_s = flush_every_s
        self._local = threading.local()
        self._lock = threading.Lock()
        # (hash key, field) → amount, for HINCRBYFLOAT (float) or HINCRBY (int) when written.
        self._pending: dict[tuple[str, str], float | int] = {}
        self._flushed_at = float("-inf")  # the first block writes at once
        self._timer: threading.Timer | None = None

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Add this thread's records to the process's sum for the block; write the sum when a second has passed."""
        if getattr(self._local, "buffering", False):  # nested blocks join the outer
            yield
            return
        self._local.buffering = True
        try:
            yield
        finally:
            self._local.buffering = False
            self._flush_or_schedule()

    def flush(self) -> None:
        """Write what is pending now (one round trip; none when nothing is)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._flushed_at = time.monotonic()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if not pending:
            return
        pipe = self.redis.pipeline(transaction=False)
        for (key, field), amount in pending.items():
            if isinstance(amount, int):
                pipe.hincrby(key, field, amount)
            else:
                pipe.hincrbyfloat(key, field, amount)
        try:
            pipe.execute()
        except redis.RedisError as exc:  # metrics never fail the work they measure
            logger.warning("could not write %d metric updates (%s)", len(pending), type(exc).__name__)

    def inc(self, name: str, labels: dict[str, str] | None = None, value: float = 1.0,
            pipeline: redis.client.Pipeline | None = None) -> None:
        """Add to a counter (with ``pipeline``: in the caller's transaction, counted only if it commits)."""
        field = json.dumps([name, labels or {}], sort_keys=True)
        if pipeline is None and self._add(COUNTERS_KEY, field, float(value)):
            return
        (pipeline if pipeline is not None else self.redis).hincrbyfloat(COUNTERS_KEY, field, value)

    def observe(self, name: str, value: float, labels: dict[str, str] | None = None) -> None:
        label_key = json.dumps(labels or {}, sort_keys=True)
        bucket = next((str(bound) for bound in LATENCY_BUCKETS if value <= bound), "+Inf")
        key, bucket_field, sum_field = HIST_KEY % name, f"{label_key}|{EXACT}{bucket}", f"{label_key}|sum"
        if self._add(key, bucket_field, 1) and self._add(key, sum_field, float(value)):
            return
        pipe = self.redis.pipeline(transaction=False)
        pipe.hincrby(key, bucket_field, 1)
        pipe.hincrbyfloat(key, sum_field, value)
        pipe.execute()

    def set_open_streams(self, count: int) -> None:
        """This process's open SSE streams (reports older than a minute are treated as gone)."""
        self.redis.hset(SSE_OPEN_KEY, process_key(), f"{count}|{time.time()}")

    def _add(self, key: str, field: str, amount: float | int) -> bool:
        """Add to the process's pending sum if this thread is in a ``deferred()`` block (else False)."""
        if not getattr(self._local, "buffering", False):
            return False
        with self._lock:
            self._pending[(key, field)] = self._pending.get((key, field), 0) + amount
        return True

    def _flush_or_schedule(self) -> None:
        with self._lock:
            if not self._pending:
                return
            due_in = self._flushed_at + self.flush_every_s - time.monotonic()
            if due_in > 0:
                if self._timer is None:  # the last records of a quiet spell still reach Redis within the second
                    self._timer = threading.Timer(due_in, self.flush)
                    self._timer.daemon = True
                    self._timer.start()
                return
        self.flush()


class RedisCollector(Collector):
    """Exposes what ``Metrics`` recorded, plus gauges computed at scrape time."""

    def __init__(self, connection: redis.Redis, gauges: Callable[[], dict[str, dict[str, float]]] | None = None):
        self.redis = connection
        self.gauges = gauges

    def collect(self) -> Iterator[Any]:
        yield from self._counters()
        for name, doc in HISTOGRAMS.items():
            yield from self._histogram(name, doc)
        yield self._open_streams()
        if self.gauges is not None:
            yield from _gauge_families(self.gauges())

    def _counters(self) -> Iterable[CounterMetricFamily]:
        families: dict[str, CounterMetricFamily] = {}
        rows: list[tuple[str, dict[str, str], float]] = []
        for raw_key, raw_value in self.redis.hgetall(COUNTERS_KEY).items():
            name, labels = json.loads(raw_key)
            rows.append((name, labels, float(raw_value)))
        for name, labels, value in sorted(rows, key=lambda r: (r[0], sorted(r[1].items()))):
            base = name.removesuffix("_total")
            family = families.get(name)
            if family is None:
                family = CounterMetricFamily(base, COUNTERS.get(name, name), labels=sorted(labels))
                families[name] = family
            family.add_metric([labels[k] for k in sorted(labels)], value)
        # A counter nothing has incremented yet is exported as 0, not left out: dashboards and
        # alerts on rare events (failures, fallbacks) see a series from the start.
        for name, doc in COUNTERS.items():
            if name not in families:
                families[name] = CounterMetricFamily(name.removesuffix("_total"), doc, value=0.0)
        return families.values()

    def _histogram(self, name: str, doc: str) -> Iterator[HistogramMetricFamily]:
        series: dict[str, dict[str, float]] = {}
        for raw_field, raw_value in self.redis.hgetall(HIST_KEY % name).items():
            field = raw_field.decode() if isinstance(raw_field, bytes) else raw_field
            label_key, _, bucket = field.rpartition("|")
            series.setdefault(label_key, {})[bucket] = float(raw_value)
        if not series:
            return
        label_names = sorted(json.loads(next(iter(series))))
        family = HistogramMetricFamily(name.removesuffix("_seconds") + "_seconds", doc, labels=label_names)
        for label_key, values in sorted(series.items()):
            labels = json.loads(label_key)
            family.add_metric([labels.get(k, "") for k in label_names], cumulative_buckets(values),
                              values.get("sum", 0.0))
        yield family

    def _open_streams(self) -> GaugeMetricFamily:
        family = GaugeMetricFamily("engram_sse_open_streams", "Open SSE streams across web processes")
        total = 0
        stale_before = time.time() - 60
        for raw in self.redis.hvals(SSE_OPEN_KEY):
            count, _, stamp = (raw.decode() if isinstance(raw, bytes) else raw).partition("|")
            if float(stamp or 0) >= stale_before:
                total += int(count)
        family.add_metric([], total)
        return family


def cumulative_buckets(values: dict[str, float]) -> list[tuple[str, float]]:
    """Prometheus buckets (count of observations ≤ bound) from per-bucket counts."""
    buckets, running = [], 0.0
    for bound in [*map(str, LATENCY_BUCKETS), "+Inf"]:
        running += values.get(EXACT + bound, 0.0)
        buckets.append((bound, running))
    return buckets


def _gauge_families(gauges: dict[str, dict[str, float]]) -> Iterator[GaugeMetricFamily]:
    """``{"engram_queue_depth": {"queue=prompt-queue": 3}}`` → gauge families."""
    for name, samples in gauges.items():
        label_names = sorted({part.split("=", 1)[0] for key in samples for part in key.split(",") if key})
        family = GaugeMetricFamily(name, name.replace("_", " "), labels=label_names)
        for key, value in sorted(samples.items()):
            labels = dict(part.split("=", 1) for part in key.split(",") if part)
            family.add_metric([labels.get(k, "") for k in label_names], value)
        yield family
