"""A digest run whose job was handed to another worker while it was still alive.

That happens when the run's job lease lapses without the run dying: Redis was unreachable for
longer than the lease (10 s), so the renewals failed, and the janitor (or RQ's own registry
cleanup) took the job for abandoned and a second worker started it again. Both runs are alive
at once: the person must still get one reply, streamed by one run, and one stored exchange.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from sqlalchemy import text

from services.janitor import LEASE_KEY, OWNED_KEY
from services.queues import LEASE_KEY as THREAD_LEASE_KEY
from services.queues import load_request
from services.streams import EventLog, request_channel
from tests.leases import job_lease
from tests.llm_steps import Reply
from tests.servers import wait_until

pytestmark = [pytest.mark.integration]

FIRST = "Otters hold hands while they sleep so they do not drift apart at night."
SECOND = "Sea otters keep a favourite stone in a pouch of loose skin under each forearm."


def _events(redis_client, request_id: str) -> list[tuple[str, dict]]:  # type: ignore[no-untyped-def,type-arg]
    rows = redis_client.xrange(f"events:{request_channel(request_id)}")
    return [(fields[b"event"].decode(), json.loads(fields[b"data"])) for _, fields in rows]


def _stored(db_engine, request_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    with db_engine.connect() as db:
        rows = db.execute(text("SELECT reply FROM exchanges WHERE request_id = :r"), {"r": request_id})
        return [row[0] for row in rows]


def test_a_run_whose_job_was_restarted_elsewhere_stops_and_the_person_gets_one_reply(
        client, worker_context, fake_llm, real_redis, db_engine) -> None:  # type: ignore[no-untyped-def]
    from workers.digest import run

    # The first run streams slowly (about 4 s); the second one answers at once.
    fake_llm.script_stream(Reply(FIRST, chunk_size=2, per_chunk_delay_s=0.1), Reply(SECOND))
    response = client.post("/chat", data=json.dumps({"text": "Tell me about otters"}),
                           content_type="application/json", buffered=False)
    request_id = response.headers["X-Request-ID"]
    first = threading.Thread(target=run, args=(request_id,), name="first-run")
    first.start()
    assert wait_until(lambda: any(kind == "delta" for kind, _ in _events(real_redis, request_id)), 30)
    # Redis was unreachable for longer than the job's and the thread's leases: both lapsed.
    real_redis.delete(THREAD_LEASE_KEY % load_request(real_redis, request_id).thread_id)
    run(request_id)  # the same job, started again by another worker while the first still streams
    first.join(timeout=60)
    assert not first.is_alive()

    events = _events(real_redis, request_id)
    kinds = [kind for kind, _ in events]
    assert kinds.count("message") == 1 and kinds.count("done") == 1 and kinds[-1] == "done", kinds
    message = next(data for kind, data in events if kind == "message")
    assert _stored(db_engine, request_id) == [message["text"]]
    assert message["text"] == SECOND
    # After the retry announced itself, only its own words stream: no run talks over another.
    retrying = max(i for i, (kind, data) in enumerate(events) if kind == "status" and data.get("stage") == "retrying")
    after = "".join(data["text"] for kind, data in events[retrying:] if kind == "delta")
    assert after == SECOND
    assert EventLog(real_redis).get_output(request_id)["text"] == SECOND


def test_a_lease_taken_over_is_neither_renewed_nor_released_by_its_old_holder(real_redis) -> None:  # type: ignore[no-untyped-def]
    job_id = "job-taken-over"
    old = job_lease(real_redis, job_id, ttl_s=3)
    old.__enter__()
    # The old run's lease lapsed while Redis was unreachable and the janitor handed the job on.
    real_redis.delete(LEASE_KEY % job_id, OWNED_KEY % job_id)
    new = job_lease(real_redis, job_id, ttl_s=3)
    new.__enter__()
    held = real_redis.get(LEASE_KEY % job_id)
    time.sleep(1.5)  # the old run's renewer runs (every ttl/3 s) and must leave the new lease alone
    assert real_redis.get(LEASE_KEY % job_id) == held
    old.__exit__(None, None, None)
    assert real_redis.get(LEASE_KEY % job_id) == held, "the old run released the new run's lease"
    assert real_redis.get(OWNED_KEY % job_id) == held
    new.__exit__(None, None, None)
    assert real_redis.get(LEASE_KEY % job_id) is None and real_redis.get(OWNED_KEY % job_id) is None


def test_a_lease_that_lapsed_before_anyone_took_the_job_is_taken_back(real_redis) -> None:  # type: ignore[no-untyped-def]
    job_id = "job-lapsed"
    with job_lease(real_redis, job_id, ttl_s=3):
        real_redis.delete(LEASE_KEY % job_id)  # lapsed over an outage; the janitor has not acted yet
        assert wait_until(lambda: real_redis.exists(LEASE_KEY % job_id), 5), "the renewer takes it back"
