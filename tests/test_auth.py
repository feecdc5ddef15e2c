"""Bearer tokens: each token is a user; nothing of one user is reachable by another."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from services.embedded.lifecycle import free_port
from services.queues import PROMPT_QUEUE
from tests.servers import wait_until
from tests.sse import parse_frames
from tests.system import ROOT
from tests.two_users import ALICE, BOB

pytestmark = pytest.mark.integration



def chat(client, token, body):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post("/chat", data=json.dumps(body), content_type="application/json", headers=headers,
                       buffered=False)


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer wrong-token-000", "Basic YWxpY2U6eA==", "alice-token-123"])
def test_missing_or_bad_token_is_401(secured, real_redis, header):
    headers = {"Authorization": header} if header else {}
    response = secured.post("/chat", json={"text": "hi"}, headers=headers)
    assert response.status_code == 401 and response.is_json
    assert real_redis.llen(f"rq:queue:{PROMPT_QUEUE}") == 0


def test_another_users_thread_and_request_look_missing(secured, run_jobs, fake_llm):
    response = chat(secured, ALICE, {"text": "my secret plan"})
    thread_id, request_id = response.headers["X-Thread-ID"], response.headers["X-Request-ID"]
    run_jobs((PROMPT_QUEUE,))
    list(response.response)
    assert chat(secured, BOB, {"text": "hi", "thread_id": thread_id}).status_code == 404
    stolen = secured.get(f"/chat/{request_id}/events", headers={"Authorization": f"Bearer {BOB}"})
    assert stolen.status_code == 404
    own = secured.get(f"/chat/{request_id}/events", headers={"Authorization": f"Bearer {ALICE}"})
    assert own.status_code == 200
    assert any(f.event == "message" for f in parse_frames(own.response))


def test_each_user_gets_their_own_thread(secured, run_jobs, fake_llm):
    a = chat(secured, ALICE, {"text": "hello from alice"})
    b = chat(secured, BOB, {"text": "hello from bob"})
    assert a.headers["X-Thread-ID"] != b.headers["X-Thread-ID"]
    run_jobs((PROMPT_QUEUE,))


def _gunicorn(bind: str, database_url: str, redis_url: str, tmp_path) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    """The web role as README's multi-machine section starts it: gunicorn's -b, ENGRAM_HOST left unset."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("ENGRAM_")}
    env.update(DATABASE_URL=database_url, REDIS_URL=redis_url, ENGRAM_DATA_DIR=str(tmp_path / "data"))
    return subprocess.Popen([sys.executable, "-m", "gunicorn", "-k", "gevent", "-w", "1", "-b", bind,
                             "api.wsgi:make_app()"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_gunicorn_bound_beyond_loopback_without_tokens_refuses_to_start(database_url, redis_server, tmp_path):
    public = _gunicorn(f"0.0.0.0:{free_port()}", database_url, redis_server.url, tmp_path)
    try:
        output, _ = public.communicate(timeout=120)
    finally:
        public.kill()
    assert public.returncode != 0, output
    assert "refusing to listen on 0.0.0.0" in output and "ENGRAM_API_TOKENS" in output, output


def test_gunicorn_on_loopback_without_tokens_serves(database_url, redis_server, tmp_path):
    port = free_port()
    local = _gunicorn(f"127.0.0.1:{port}", database_url, redis_server.url, tmp_path)
    try:
        assert wait_until(lambda: _healthz(port) is not None, timeout=120), "the loopback web process never answered"
        assert local.poll() is None
    finally:
        local.terminate()
        local.communicate(timeout=30)


def _healthz(port: int) -> int | None:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code
    except httpx.HTTPError:
        return None
