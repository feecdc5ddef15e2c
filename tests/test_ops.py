"""Operations: health, metrics, migrations on the embedded default, refusing unsafe starts, deploy files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from services.queues import MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from tests.llm_steps import Json, Reply
from tests.test_memory_chunker import GOOD_CHUNK

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.integration
def test_healthz_is_503_until_a_digest_worker_listens(client):
    response = client.get("/healthz")
    assert response.status_code == 503
    checks = response.json["checks"]
    assert checks["redis"]["ok"] and checks["postgres"]["ok"] and checks["llm"]["ok"]
    assert not checks["digest_workers"]["ok"]


@pytest.mark.integration
def test_metrics_expose_modes_latencies_queues_and_memory(client, run_jobs, fake_llm):
    fake_llm.script(Reply("Fine, thanks."))
    response = client.post("/chat", json={"text": "Tell me about the weather on Mars."}, buffered=False)
    run_jobs((PROMPT_QUEUE,))
    list(response.response)
    body = client.get("/metrics").get_data(as_text=True)
    assert 'engram_mode_total{mode="RESPOND"} 1.0' in body
    assert 'engram_chat_requests_total{outcome="accepted"} 1.0' in body
    assert "engram_routing_seconds_bucket" in body and "engram_llm_seconds_bucket" in body
    assert 'engram_queue_depth{queue="prompt-queue"} 0.0' in body
    assert 'engram_memory_items{kind="exchanges"} 1.0' in body
    # A chat's exchange is stored lean: its vector waits for the chunker job the reply queued.
    assert "engram_vectors_pending 1.0" in body
    assert "engram_tokens_total" in body
    fake_llm.route("MEMORY CHUNK", Json(GOOD_CHUNK))
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    assert "engram_vectors_pending 0.0" in client.get("/metrics").get_data(as_text=True)


@pytest.mark.integration
def test_ops_and_chat_pages_are_served(client):
    ops = client.get("/ops")
    assert b"/static/ops.js" in ops.data
    assert "default-src 'self'" in ops.headers["Content-Security-Policy"]  # nothing loads from elsewhere
    assert b"/static/chat.js" in client.get("/").data
    assert b"/static/memory.js" in client.get("/memory").data
    assert b"readEvents" in client.get("/static/common.js").data


def _engram(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "consumer.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


@pytest.mark.integration
def test_migrate_works_on_the_embedded_default_and_leaves_nothing_running(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env["ENGRAM_DATA_DIR"] = str(tmp_path / "data")
    first = _engram("migrate", env=env)
    assert first.returncode == 0, first.stderr
    assert "database at revision" in first.stdout
    again = _engram("migrate", env=env)  # data persisted: already at head, still fine
    assert again.returncode == 0 and again.stdout == first.stdout
    pid_file = tmp_path / "data" / "postgres" / "postmaster.pid"
    assert not pid_file.exists(), "migrate stops the server it started"


def test_run_refuses_a_public_address_without_tokens(tmp_path):
    env = {**os.environ, "ENGRAM_HOST": "0.0.0.0", "ENGRAM_DATA_DIR": str(tmp_path)}
    env.pop("ENGRAM_API_TOKENS", None)
    result = _engram("run", env=env)
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without authentication" in result.stderr


def test_run_without_any_llm_says_both_ways_to_fix_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(ENGRAM_LOCAL_LLM="false", ENGRAM_DATA_DIR=str(tmp_path), REDIS_URL="redis://127.0.0.1:1/0",
               DATABASE_URL="postgresql://127.0.0.1:1/x")
    result = _engram("run", "web", env=env)
    assert result.returncode == 2
    assert "OPENAI_BASE_URL" in result.stderr


def test_unknown_role_is_a_usage_error():
    result = _engram("run", "nonsense", env=dict(os.environ))
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_procfile_lists_every_role():
    roles = {line.split(":", 1)[0] for line in (ROOT / "Procfile").read_text().splitlines() if line.strip()}
    assert {"web", "digest", "chunker", "episodic", "background", "scheduler"} <= roles


def _compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


@pytest.mark.skipif(_compose_command() is None, reason="neither `docker compose` nor docker-compose is installed")
def test_compose_file_is_valid():
    command = _compose_command() or []
    env = {**os.environ, "ENGRAM_API_TOKENS": "compose-test-token:me"}
    result = subprocess.run([*command, "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(_compose_command() is None, reason="neither `docker compose` nor docker-compose is installed")
def test_compose_refuses_a_public_web_without_tokens():
    command = _compose_command() or []
    env = {key: value for key, value in os.environ.items() if key != "ENGRAM_API_TOKENS"}
    result = subprocess.run([*command, "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
                            capture_output=True, text=True, env=env)
    assert result.returncode != 0 and "ENGRAM_API_TOKENS" in result.stderr


def test_compose_workers_scale():
    """`docker compose up --scale digest=4` needs workers without fixed names or host ports."""
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert not any("container_name" in service for service in services.values())
    for name in ("digest", "chunker", "episodic", "background", "scheduler"):
        assert "ports" not in services[name], name
        assert "-n" not in services[name]["command"] and "--name" not in services[name]["command"], name


def test_compose_runs_every_role_with_healthchecked_servers():
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"redis", "postgres", "web", "digest", "chunker", "episodic", "background", "scheduler"} <= set(services)
    assert services["postgres"]["image"].startswith("pgvector/pgvector")
    assert all("healthcheck" in services[name] for name in ("redis", "postgres", "web"))
