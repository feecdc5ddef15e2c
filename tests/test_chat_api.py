"""POST /chat end to end inside one process: real Redis + PostgreSQL, RQ worker, fake LLM."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import func, select, text

from services.db import Exchange, RoutingDecision
from services.queues import PROMPT_QUEUE
from tests.llm_steps import Error, Hang, Reply
from tests.sse import events, parse_frames

pytestmark = pytest.mark.integration


def post_chat(client, body, **kwargs):
    return client.post("/chat", data=json.dumps(body), content_type="application/json", buffered=False, **kwargs)


def test_chat_streams_every_event_and_stores_the_exchange(client, run_jobs, fake_llm, db_engine):
    fake_llm.script(Reply("Paris is the capital of France.", chunk_size=4))
    response = post_chat(client, {"text": "What is the capital of France?"})
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Accel-Buffering"] == "no"
    request_id = response.headers["X-Request-ID"]
    assert uuid.UUID(request_id).version == 4
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    kinds = events(frames)
    assert kinds[0] == "status" and frames[0].data["stage"] == "processing"
    assert frames[1].event == "status" and frames[1].data["stage"] == "thinking"
    assert {"topic", "mode"} <= set(frames[1].data)
    assert "delta" in kinds
    assert kinds[-2:] == ["message", "done"]
    assert all(f.id for f in frames)
    deltas = "".join(f.data["text"] for f in frames if f.event == "delta")
    message = frames[-2].data
    assert deltas == message["text"] == "Paris is the capital of France."
    assert set(message) >= {"text", "mode", "topic", "confidence", "exchange_id", "metrics"}
    assert set(message["metrics"]) == {"tokens_total", "tools", "response_time_s"}
    assert message["metrics"]["tokens_total"] > 0
    with db_engine.connect() as connection:
        row = connection.execute(select(Exchange).where(Exchange.request_id == request_id)).one()
        decisions = connection.execute(select(func.count()).select_from(RoutingDecision)).scalar_one()
    assert row.reply == message["text"] and row.user_text == "What is the capital of France?"
    assert row.id == message["exchange_id"] and row.total_tokens == message["metrics"]["tokens_total"]
    assert decisions == 1
    from rq import Queue

    chunk_job = Queue("memory-chunker-queue", connection=client.application.extensions["engram"].redis).fetch_job(
        f"chunk-{row.id}"
    )
    assert chunk_job is not None and chunk_job.args == (row.id,)
    digest_job = Queue("prompt-queue", connection=client.application.extensions["engram"].redis).fetch_job(
        f"digest-{request_id}"
    )
    # Both are the person's own: only they see and retry them on the ops page.
    assert chunk_job.meta["user_id"] == digest_job.meta["user_id"] == row.user_id


def test_reconnect_with_last_event_id_replays_the_rest(client, run_jobs, fake_llm):
    fake_llm.script(Reply("One two three four five.", chunk_size=3))
    response = post_chat(client, {"text": "count to five"})
    request_id = response.headers["X-Request-ID"]
    response.close()  # the client drops before anything is processed
    run_jobs((PROMPT_QUEUE,))
    full = [f for f in parse_frames(client.get(f"/chat/{request_id}/events").response) if not f.comment]
    cut = full[2]  # resume after the "thinking" status
    resumed = client.get(f"/chat/{request_id}/events", headers={"Last-Event-ID": cut.id})
    rest = [f for f in parse_frames(resumed.response) if not f.comment]
    assert [f.id for f in rest] == [f.id for f in full[3:]]
    assert events(rest)[-2:] == ["message", "done"]


def test_thread_continues_and_history_reaches_the_prompt(client, run_jobs, fake_llm):
    fake_llm.script(Reply("The Alps are lovely in summer."), Reply("Try the Haute Route."))
    first = post_chat(client, {"text": "I am planning a trip to the Alps this summer."})
    thread_id = first.headers["X-Thread-ID"]
    run_jobs((PROMPT_QUEUE,))
    list(first.response)
    second = post_chat(client, {"text": "Which hiking trail there would you recommend?", "thread_id": thread_id})
    assert second.headers["X-Thread-ID"] == thread_id
    run_jobs((PROMPT_QUEUE,))
    list(second.response)
    system_prompt = fake_llm.requests[-1]["messages"][0]["content"]
    assert "trip to the Alps" in system_prompt and "lovely in summer" in system_prompt


def test_llm_failure_twice_gives_the_fallback_reply_and_still_stores(client, run_jobs, fake_llm, db_engine):
    fake_llm.script(Error(500), Error(500))
    response = post_chat(client, {"text": "Tell me something interesting about octopuses."})
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    message = next(f for f in frames if f.event == "message")
    assert "trouble thinking" in message.data["text"]
    # A client can tell the apology from an answer, and why the LLM failed.
    assert message.data["fallback"] is True
    assert "HTTP 500" in message.data["reason"]
    with db_engine.connect() as connection:
        stored = connection.execute(text("SELECT fallback FROM exchanges")).scalar_one()
    assert stored is True


def test_a_normal_reply_is_not_marked_as_a_fallback(client, run_jobs, fake_llm):
    response = post_chat(client, {"text": "Tell me something interesting about octopuses."})
    run_jobs((PROMPT_QUEUE,))
    message = next(f for f in parse_frames(response.response) if f.event == "message")
    assert message.data["text"] == "Echo: Tell me something interesting about octopuses."  # the fake's answer
    assert "fallback" not in message.data


def test_llm_timeout_then_success_retries_once(client, run_jobs, fake_llm, settings):
    fake_llm.script(Hang(5), Reply("Recovered answer."))
    # The respond role's timeout in configs/agents.toml is long; shorten it for this test.
    from workers.process import current_context

    context = current_context()
    role = context.llm.roles["respond"]
    from dataclasses import replace

    context.llm.roles["respond"] = replace(role, timeout_s=0.5)
    response = post_chat(client, {"text": "please answer eventually"})
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    assert next(f for f in frames if f.event == "message").data["text"] == "Recovered answer."


def test_a_retried_job_never_stores_twice(client, run_jobs, fake_llm, db_engine, real_redis):
    from workers.digest import run

    fake_llm.script(Reply("Stored once."))
    response = post_chat(client, {"text": "store me once"})
    request_id = response.headers["X-Request-ID"]
    run_jobs((PROMPT_QUEUE,))
    real_redis.delete(f"output:{request_id}")  # as if the worker died right after storing
    run(request_id)
    with db_engine.connect() as connection:
        count = connection.execute(text("SELECT count(*) FROM exchanges")).scalar_one()
    assert count == 1
    frames = [f for f in parse_frames(client.get(f"/chat/{request_id}/events").response) if not f.comment]
    assert events(frames).count("message") >= 1


BAD_BODIES = [
    ({}, 400),
    ({"text": ""}, 400),
    ({"text": "   \n\t"}, 400),
    ({"text": 42}, 400),
    ({"text": None}, 400),
    ({"text": "hi", "source": "fax"}, 400),
    ({"text": "hi", "thread_id": 7}, 400),
    ({"text": "hi", "thread_id": ""}, 400),
    ({"text": "hi", "mood": "happy"}, 400),
    ({"text": "x" * 9000}, 413),
    (["text", "hi"], 400),
]


@pytest.mark.parametrize(("body", "status"), BAD_BODIES)
def test_bad_bodies_get_json_errors_and_enqueue_nothing(client, real_redis, body, status):
    response = client.post("/chat", data=json.dumps(body), content_type="application/json")
    assert response.status_code == status
    assert response.is_json and response.json["error"]["message"]
    assert real_redis.llen(f"rq:queue:{PROMPT_QUEUE}") == 0


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [
        (b"not json", "application/json", 400),
        (b'{"text": "hi"', "application/json", 400),
        (b'{"text": "\xff\xfe"}', "application/json", 400),
        (b'{"text": "hi"}', "text/plain", 415),
        (b"text=hi", "application/x-www-form-urlencoded", 415),
        (b"x" * 200_000, "application/json", 413),
    ],
)
def test_malformed_requests_get_json_errors(client, real_redis, data, content_type, status):
    response = client.post("/chat", data=data, content_type=content_type)
    assert response.status_code == status
    assert response.is_json
    assert real_redis.llen(f"rq:queue:{PROMPT_QUEUE}") == 0


def test_unknown_thread_is_404(client, real_redis):
    response = client.post("/chat", json={"text": "hi", "thread_id": "no-such-thread"})
    assert response.status_code == 404
    assert real_redis.llen(f"rq:queue:{PROMPT_QUEUE}") == 0


def test_unknown_request_events_is_404(client):
    assert client.get(f"/chat/{uuid.uuid4()}/events").status_code == 404


def test_wrong_method_is_json_405(client):
    response = client.get("/chat")
    assert response.status_code == 405 and response.is_json


@pytest.fixture
def no_retry_client(settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from api import WebDeps, create_app

    strict = replace(settings, job_retries=0)
    deps = WebDeps.build(strict)
    yield create_app(strict, deps).test_client()
    deps.fanout.stop()
    deps.engine.dispose()


def test_a_job_that_fails_for_good_tells_the_client_and_lands_in_failed_registry(
    no_retry_client, run_jobs, fake_llm, db_engine, real_redis, monkeypatch
):
    from rq import Queue
    from rq.registry import FailedJobRegistry

    def explode(*args, **kwargs):
        raise RuntimeError("classifier exploded")

    monkeypatch.setattr("workers.digest.understand", explode)
    response = post_chat(no_retry_client, {"text": "this will fail"})
    request_id = response.headers["X-Request-ID"]
    run_jobs((PROMPT_QUEUE,))
    frames = [f for f in parse_frames(response.response) if not f.comment]
    assert events(frames)[-2:] == ["error", "done"]
    assert frames[-2].data["recoverable"] is True and "went wrong" in frames[-2].data["message"]
    failed = FailedJobRegistry(queue=Queue(PROMPT_QUEUE, connection=real_redis))
    assert f"digest-{request_id}" in failed.get_job_ids()
    with db_engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM exchanges")).scalar_one() == 0
    # The thread is not blocked: the next message goes through.
    monkeypatch.undo()
    follow_up = post_chat(no_retry_client, {"text": "and this works"})
    run_jobs((PROMPT_QUEUE,))
    assert events([f for f in parse_frames(follow_up.response) if not f.comment])[-2:] == ["message", "done"]
