"""The ops page's JSON: RQ registries, retrying a failed job, routing decisions; authenticated."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rq import Queue, SimpleWorker

from services.queues import ALL_QUEUES, BACKGROUND_QUEUE, PROMPT_QUEUE
from tests.fake_llm import Reply

pytestmark = pytest.mark.integration

TOKEN = "ops-token-12345"


@pytest.fixture
def secured(settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    from api import WebDeps, create_app

    secure = replace(settings, api_tokens={TOKEN: "alice"})
    deps = WebDeps.build(secure)
    app = create_app(secure, deps)
    yield app.test_client()
    deps.fanout.stop()
    deps.engine.dispose()


HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def fail_one_job(connection) -> str:  # type: ignore[no-untyped-def]
    queue = Queue(BACKGROUND_QUEUE, connection=connection)
    job = queue.enqueue("json.loads", "not json", job_id="ops-broken-job")
    SimpleWorker([queue], connection=connection).work(burst=True, with_scheduler=False)
    return job.id


def test_queues_workers_and_failed_jobs_come_from_rq(secured, real_redis):
    job_id = fail_one_job(real_redis)
    body = secured.get("/ops/queues", headers=HEADERS).json
    assert [q["queue"] for q in body["queues"]] == list(ALL_QUEUES)
    background = next(q for q in body["queues"] if q["queue"] == BACKGROUND_QUEUE)
    assert background["failed"] == 1 and background["queued"] == 0
    failed = body["failed_jobs"][0]
    assert failed["id"] == job_id and failed["queue"] == BACKGROUND_QUEUE
    assert "JSONDecodeError" in failed["error"] and failed["function"] == "json.loads"
    metrics = secured.get("/metrics").get_data(as_text=True)
    assert f'engram_failed_jobs{{queue="{BACKGROUND_QUEUE}"}} 1.0' in metrics
    assert f'engram_workers{{queue="{PROMPT_QUEUE}"}} 0.0' in metrics
    assert "engram_started_jobs" in metrics and "engram_scheduled_jobs" in metrics


def test_retry_puts_a_failed_job_back_once(secured, real_redis):
    job_id = fail_one_job(real_redis)
    response = secured.post(f"/ops/jobs/{job_id}/retry", headers=HEADERS)
    assert response.status_code == 200 and response.json == {"requeued": job_id, "queue": BACKGROUND_QUEUE}
    queue = Queue(BACKGROUND_QUEUE, connection=real_redis)
    assert queue.job_ids == [job_id] and queue.failed_job_registry.count == 0
    again = secured.post(f"/ops/jobs/{job_id}/retry", headers=HEADERS)
    assert again.status_code == 404 and again.json["error"]["code"] == "not_found"
    assert queue.job_ids == [job_id]  # not queued twice


def test_ops_data_needs_the_token(secured, real_redis):
    job_id = fail_one_job(real_redis)
    assert secured.get("/ops/queues").status_code == 401
    assert secured.post(f"/ops/jobs/{job_id}/retry").status_code == 401
    assert secured.get("/ops/routing").status_code == 401
    assert Queue(BACKGROUND_QUEUE, connection=real_redis).failed_job_registry.count == 1
    assert secured.post("/ops/jobs/no-such-job/retry", headers=HEADERS).status_code == 404


def test_routing_decisions_show_mode_and_signals(secured, run_jobs, fake_llm):
    fake_llm.script(Reply("Here you go."))
    response = secured.post("/chat", json={"text": "Explain how tides work."}, headers=HEADERS, buffered=False)
    run_jobs((PROMPT_QUEUE,))
    list(response.response)
    decisions = secured.get("/ops/routing?limit=5", headers=HEADERS).json["decisions"]
    assert len(decisions) == 1
    decision = decisions[0]
    assert decision["mode"] == "RESPOND" and decision["request_id"] == response.headers["X-Request-ID"]
    assert decision["signals"] and decision["scores"] and decision["topic"]
    assert secured.get("/ops/routing?limit=0", headers=HEADERS).status_code == 400
