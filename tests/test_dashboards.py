"""Grafana and Prometheus config against what /metrics really exports after a turn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from services.queues import PROMPT_QUEUE
from tests.llm_steps import Reply

ROOT = Path(__file__).resolve().parents[1]
DASHBOARDS = sorted((ROOT / "deploy/grafana/dashboards").glob("*.json"))
# Names in a PromQL expression that are functions, keywords or label names, not metrics.
PROMQL_WORDS = {"sum", "by", "rate", "increase", "histogram_quantile", "le", "without", "avg", "max", "min",
                "count", "on", "ignoring", "group_left", "group_right", "irate", "delta", "topk", "bottomk"}


def panel_exprs(dashboard: dict) -> list[tuple[str, str]]:
    """(panel title, expr) for every query of every panel, rows included."""
    found = []
    for panel in dashboard["panels"]:
        for inner in [panel, *panel.get("panels", [])]:
            found.extend((inner["title"], target["expr"]) for target in inner.get("targets", []))
    return found


def metric_names(expr: str) -> set[str]:
    without_strings = re.sub(r'"[^"]*"', "", expr)
    without_ranges = re.sub(r"\[[^\]]*\]", "", without_strings)
    without_labels = re.sub(r"\{[^}]*\}", "", without_ranges)
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", without_labels))
    label_lists = set(re.findall(r"(?:by|without)\s*\(([^)]*)\)", without_labels))
    labels = {name.strip() for group in label_lists for name in group.split(",")}
    return {word for word in words - PROMQL_WORDS - labels if not word.isdigit()}


@pytest.fixture
def exported(client, run_jobs, fake_llm) -> set[str]:
    """Sample names of /metrics on a real app after one chat turn."""
    fake_llm.script(Reply("A fine day for a walk."))
    response = client.post("/chat", json={"text": "What do you think about a walk today?"}, buffered=False)
    run_jobs((PROMPT_QUEUE,))
    list(response.response)
    body = client.get("/metrics").get_data(as_text=True)
    return {line.split("{")[0].split(" ")[0] for line in body.splitlines() if line and not line.startswith("#")}


def test_metric_name_extraction_ignores_functions_labels_and_ranges() -> None:
    expr = 'histogram_quantile(0.99, sum by (le, role) (rate(engram_llm_seconds_bucket{role="act"}[5m])))'
    assert metric_names(expr) == {"engram_llm_seconds_bucket"}


@pytest.mark.integration
def test_every_dashboard_query_names_an_exported_metric(exported: set[str]) -> None:
    assert DASHBOARDS, "no dashboards provisioned"
    checked = 0
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        for title, expr in panel_exprs(dashboard):
            names = metric_names(expr)
            assert names, f"{path.name}: panel {title!r} queries no metric: {expr}"
            missing = names - exported
            assert not missing, f"{path.name}: panel {title!r} queries {sorted(missing)}, not in /metrics"
            checked += 1
    assert checked >= 20


def test_every_dashboard_panel_has_a_query_and_a_unique_id() -> None:
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        ids = [panel["id"] for panel in dashboard["panels"]]
        assert len(ids) == len(set(ids))
        for panel in dashboard["panels"]:
            assert panel["type"] == "row" or panel.get("targets"), f"panel {panel['title']!r} has no query"


def test_dashboards_cover_the_ops_page() -> None:
    exprs = " ".join(expr for path in DASHBOARDS for _, expr in panel_exprs(json.loads(path.read_text())))
    for metric in ("engram_mode_total", "engram_routing_seconds", "engram_classification_seconds",
                   "engram_llm_first_token_seconds", "engram_reply_seconds", "engram_tokens_total",
                   "engram_memory_enrichment_failures_total", "engram_sse_open_streams", "engram_queue_depth",
                   "engram_started_jobs", "engram_scheduled_jobs", "engram_failed_jobs", "engram_workers"):
        assert metric in exprs, metric


def test_prometheus_scrapes_the_web_service_metrics() -> None:
    config = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    engram = jobs["engram"]
    assert engram.get("metrics_path", "/metrics") == "/metrics"
    targets = [target for group in engram["static_configs"] for target in group["targets"]]
    host, port = targets[0].split(":")
    assert host in compose, f"scrape target {host!r} is not a compose service"
    assert any(f"0.0.0.0:{port}" in part for part in compose[host]["command"]), "the web service listens elsewhere"
    assert "./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro" in compose["prometheus"]["volumes"]


def test_grafana_provisioning_points_at_the_dashboards_and_prometheus() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    provider = yaml.safe_load((ROOT / "deploy/grafana/provisioning/dashboards/engram.yml").read_text())
    datasource = yaml.safe_load((ROOT / "deploy/grafana/provisioning/datasources/prometheus.yml").read_text())
    path = provider["providers"][0]["options"]["path"]
    assert f"./deploy/grafana/dashboards:{path}:ro" in compose["grafana"]["volumes"]
    source = datasource["datasources"][0]
    assert source["url"] == "http://prometheus:9090" and "prometheus" in compose
    uids = {t["datasource"]["uid"] for p in DASHBOARDS for _, t in
            [(None, t) for panel in json.loads(p.read_text())["panels"] for t in panel.get("targets", [])]}
    assert uids == {source["uid"]}
