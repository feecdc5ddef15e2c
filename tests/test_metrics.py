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


def test_cumulative_counts_written_by_an_earlier_version_still_count() -> None:
    connection = fakeredis.FakeRedis()
    key = HIST_KEY % "engram_reply_seconds"
    for bound in ("0.5", "1", "2.5", "5", "10", "30", "60", "+Inf"):  # one old observation of 0.4 s
        connection.hincrby(key, f"{{}}|{bound}", 1)
    connection.hincrbyfloat(key, "{}|sum", 0.4)
    Metrics(connection).observe("engram_reply_seconds", 0.003)
    buckets = scraped_buckets(connection, "engram_reply_seconds")
    assert buckets[("engram_reply_seconds_bucket", "0.005")] == 1
    assert buckets[("engram_reply_seconds_bucket", "0.5")] == 2
    assert buckets[("engram_reply_seconds_bucket", "+Inf")] == 2
