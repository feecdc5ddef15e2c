"""Bearer tokens: each token is a user; nothing of one user is reachable by another."""

from __future__ import annotations

import json

import pytest

from services.queues import PROMPT_QUEUE
from tests.sse import parse_frames
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
