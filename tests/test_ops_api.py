"""The ops page's JSON: RQ registries, retrying a failed job, routing decisions; authenticated."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rq import Queue, SimpleWorker

from services.queues import ALL_QUEUES, BACKGROUND_QUEUE, PROMPT_QUEUE, job_owner, owner_meta
from tests.llm_steps import Reply

pytestmark = pytest.mark.integration

TOKEN = "ops-token-12345"
BOB_TOKEN = "bob-ops-token-678"


@pytest.fixture
def secured(settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    from api import WebDeps, create_app

    secure = replace(settings, api_tokens={TOKEN: "alice", BOB_TOKEN: "bob"}, operators=frozenset({"alice"}))
    deps = WebDeps.build(secure)
    app = create_app(secure, deps)
    yield app.test_client()
    deps.fanout.stop()
    deps.engine.dispose()


HEADERS = {"Authorization": f"Bearer {TOKEN}"}
BOB = {"Authorization": f"Bearer {BOB_TOKEN}"}


def fail_one_job(connection, owner: str | None = None, job_id: str = "ops-broken-job") -> str:  # type: ignore[no-untyped-def]
    """A failed job; ``owner`` None makes it an operator job (like a periodic service run)."""
    queue = Queue(BACKGROUND_QUEUE, connection=connection)
    job = queue.enqueue("json.loads", "not json", job_id=job_id, meta=owner_meta(owner))
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


def test_a_users_failed_job_is_listed_and_retried_for_that_user_only(secured, real_redis):
    bobs = fail_one_job(real_redis, owner="bob", job_id="bob-broken-job")
    operator = fail_one_job(real_redis)  # owned by no user (a periodic run): for the operators (alice) only
    assert {job["id"] for job in secured.get("/ops/queues", headers=HEADERS).json["failed_jobs"]} == {operator}
    assert {job["id"] for job in secured.get("/ops/queues", headers=BOB).json["failed_jobs"]} == {bobs}
    refused = secured.post(f"/ops/jobs/{bobs}/retry", headers=HEADERS)
    assert refused.status_code == 404 and refused.json["error"]["code"] == "not_found"  # as if it did not exist
    not_an_operator = secured.post(f"/ops/jobs/{operator}/retry", headers=BOB)
    assert not_an_operator.status_code == 404 and not_an_operator.json["error"]["code"] == "not_found"
    queue = Queue(BACKGROUND_QUEUE, connection=real_redis)
    assert bobs in queue.failed_job_registry and operator in queue.failed_job_registry and queue.job_ids == []
    assert secured.post(f"/ops/jobs/{bobs}/retry", headers=BOB).json == {"requeued": bobs, "queue": BACKGROUND_QUEUE}
    assert secured.post(f"/ops/jobs/{operator}/retry", headers=HEADERS).status_code == 200
    assert queue.job_ids == [bobs, operator] and queue.failed_job_registry.count == 0


def test_a_chat_job_queued_before_owner_tagging_is_an_operator_job(secured, real_redis):
    # Decided (issue 30): a job whose meta names no owner may have been anyone's, so no user sees it;
    # the operators do, and retry it like a periodic run.
    queue = Queue(PROMPT_QUEUE, connection=real_redis)
    job = queue.enqueue("json.loads", "not json", job_id="pre-tagging-chat", meta={"request_id": "r1"})
    SimpleWorker([queue], connection=real_redis).work(burst=True, with_scheduler=False)
    assert [j["id"] for j in secured.get("/ops/queues", headers=BOB).json["failed_jobs"]] == []
    assert secured.post(f"/ops/jobs/{job.id}/retry", headers=BOB).status_code == 404
    assert [j["id"] for j in secured.get("/ops/queues", headers=HEADERS).json["failed_jobs"]] == [job.id]
    assert secured.post(f"/ops/jobs/{job.id}/retry", headers=HEADERS).status_code == 200
    assert queue.job_ids == [job.id]


def test_without_tokens_the_local_user_operates_and_retries_periodic_runs(client, real_redis):
    operator = fail_one_job(real_redis)
    assert [job["id"] for job in client.get("/ops/queues").json["failed_jobs"]] == [operator]
    assert client.post(f"/ops/jobs/{operator}/retry").status_code == 200
    assert Queue(BACKGROUND_QUEUE, connection=real_redis).job_ids == [operator]


def test_a_chats_digest_job_belongs_to_its_user(secured, real_redis):
    response = secured.post("/chat", json={"text": "hello"}, headers=BOB, buffered=False)
    assert response.status_code == 200
    job = Queue(PROMPT_QUEUE, connection=real_redis).fetch_job(f"digest-{response.headers['X-Request-ID']}")
    response.close()
    assert job is not None and job_owner(job.meta) == "bob"


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
