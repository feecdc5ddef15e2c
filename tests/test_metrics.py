"""Histograms kept in Redis: one bucket written per observation, cumulative buckets on /metrics."""

from __future__ import annotations

import fakeredis
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from services.metrics import HIST_KEY, Metrics, RedisCollector


def scraped_buckets(connection: fakeredis.FakeRedis, name: str) -> dict[tuple[str, str], float]:
    from prometheus_client import generate_latest

    registry = CollectorRegistry()
    registry.register(RedisCollector(connection))
    samples = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            if sample.name in (f"{name}_bucket", f"{name}_count", f"{name}_sum"):
                samples[(sample.name, sample.labels.get("le", ""))] = sample.value
    return samples


def test_observations_become_cumulative_prometheus_buckets() -> None:
    connection = fakeredis.FakeRedis()
    metrics = Metrics(connection)
    for value in (0.0004, 0.003, 0.003, 0.2, 99.0):
        metrics.observe("engram_reply_seconds", value)
    buckets = scraped_buckets(connection, "engram_reply_seconds")
    assert buckets[("engram_reply_seconds_bucket", "0.0005")] == 1
    assert buckets[("engram_reply_seconds_bucket", "0.0025")] == 1
    assert buckets[("engram_reply_seconds_bucket", "0.005")] == 3
    assert buckets[("engram_reply_seconds_bucket", "0.25")] == 4
    assert buckets[("engram_reply_seconds_bucket", "60")] == 4
    assert buckets[("engram_reply_seconds_bucket", "+Inf")] == 5
    assert buckets[("engram_reply_seconds_count", "")] == 5
    assert abs(buckets[("engram_reply_seconds_sum", "")] - 99.2064) < 1e-9


def test_an_observation_writes_two_fields_not_one_per_bucket() -> None:
    connection = fakeredis.FakeRedis()
    Metrics(connection).observe("engram_routing_seconds", 0.002, {"role": "x"})
    assert len(connection.hgetall(HIST_KEY % "engram_routing_seconds")) == 2


def test_records_of_deferred_blocks_are_summed_in_the_process_and_reach_redis_within_the_flush_interval() -> None:
    import time

    from services.metrics import COUNTERS_KEY

    connection = fakeredis.FakeRedis()
    metrics = Metrics(connection, flush_every_s=0.3)
    metrics._flushed_at = time.monotonic()  # a write just happened
    for _ in range(3):  # three digest turns in quick succession
        with metrics.deferred():
            metrics.inc("engram_mode_total", {"mode": "reflect"})
            metrics.observe("engram_reply_seconds", 0.003)
    assert connection.hgetall(COUNTERS_KEY) == {}  # not one write per turn
    deadline = time.monotonic() + 5
    while not connection.hgetall(COUNTERS_KEY) and time.monotonic() < deadline:
        time.sleep(0.05)
    buckets = scraped_buckets(connection, "engram_reply_seconds")
    assert buckets[("engram_reply_seconds_count", "")] == 3
    assert buckets[("engram_reply_seconds_bucket", "0.005")] == 3
    assert abs(buckets[("engram_reply_seconds_sum", "")] - 0.009) < 1e-9
    assert float(connection.hget(COUNTERS_KEY, '["engram_mode_total", {"mode": "reflect"}]')) == 3


def test_a_deferred_block_after_a_quiet_second_writes_at_once_and_flush_writes_the_rest() -> None:
    from services.metrics import COUNTERS_KEY

    connection = fakeredis.FakeRedis()
    metrics = Metrics(connection, flush_every_s=60)
    with metrics.deferred():  # the process's first block: nothing written yet, so at once
        metrics.inc("engram_llm_fallbacks_total")
    assert float(connection.hget(COUNTERS_KEY, '["engram_llm_fallbacks_total", {}]')) == 1
    with metrics.deferred():  # within the interval now: pending until flush() (a stopping worker calls it)
        metrics.inc("engram_llm_fallbacks_total", value=2)
    assert float(connection.hget(COUNTERS_KEY, '["engram_llm_fallbacks_total", {}]')) == 1
    metrics.flush()
    assert float(connection.hget(COUNTERS_KEY, '["engram_llm_fallbacks_total", {}]')) == 3
    metrics.inc("engram_llm_fallbacks_total")  # outside a deferred block: written at once
    assert float(connection.hget(COUNTERS_KEY, '["engram_llm_fallbacks_total", {}]')) == 4
