"""Servers that die and come back, with real Valkey and PostgreSQL processes (no `engram run`).

Each test owns the server it kills, so the session's shared servers stay up for everyone else.
The end-to-end versions under `engram run` are in tests/test_faults_e2e.py.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from rq import Queue
from rq.registry import ScheduledJobRegistry
from rq.scheduler import RQScheduler

from services.db import make_engine
from services.embedded.lifecycle import wait_gone
from services.fanout import FanOut
from services.janitor import ScheduledMover
from services.migrate import upgrade_head
from services.queues import PROMPT_QUEUE
from services.settings import Settings
from services.streams import ENDS_KEY, EventLog, StreamLimits, follow, request_channel
from services.supervisor import Supervisor
from tests import servers
from tests.llm_steps import Reply
from tests.servers import start_postgres, start_redis
from tests.sse import parse_frames

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def wait_until(predicate: Callable[[], object], timeout: float = 20.0) -> bool:
    return servers.wait_until(predicate, timeout)  # recovery waits are longer than the shared default


def kill9(pid: int | None) -> None:
    assert pid is not None, "the server should be running"
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)


def supervise_until_back(server) -> Supervisor:  # type: ignore[no-untyped-def]
    supervisor = Supervisor([], redis_client=None, hung_after_s=60, servers=[server])
    assert wait_until(lambda: (supervisor.check(), server.pid is not None)[1]), f"{server.name} was not restarted"
    return supervisor


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator:  # type: ignore[type-arg]
    server = start_redis(tmp_path / "own-redis")
    yield server
    server.stop()


@pytest.fixture
def own_postgres(tmp_path: Path) -> Iterator:  # type: ignore[type-arg]
    server = start_postgres(tmp_path / "own-postgres")
    yield server
    server.stop()


def test_supervisor_restarts_a_killed_redis_on_its_port_with_its_data(own_redis) -> None:
    client = redis.Redis.from_url(own_redis.url)
    client.set("survives", "yes")
    client.rpush("rq:queue:prompt-queue", "job-1")
    # appendfsync everysec: Valkey may hold a write back while the disk is still syncing the previous
    # second (up to 2 s); older writes are on disk. A loaded CI disk makes that window real.
    time.sleep(2.5)
    kill9(own_redis.pid)
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(own_redis.url, retry=None, socket_connect_timeout=1).ping()
    supervisor = supervise_until_back(own_redis)
    assert supervisor.servers[0].restarts == 1
    # The same client object reconnects by itself: same URL, data from the append-only file.
    assert client.get("survives") == b"yes"
    assert client.lrange("rq:queue:prompt-queue", 0, -1) == [b"job-1"]


def test_supervisor_restarts_a_killed_postgres_with_its_data(own_postgres) -> None:
    engine = make_engine(own_postgres.url)
    with engine.begin() as connection, engine.connect() as second:  # two connections in the pool
        connection.exec_driver_sql("CREATE TABLE kept (id int PRIMARY KEY)")
        connection.exec_driver_sql("INSERT INTO kept VALUES (42)")
        second.exec_driver_sql("SELECT 1")
    kill9(own_postgres.pid)
    supervise_until_back(own_postgres)
    # The pooled connections died with the server; the checkout check replaces them (no error reaches
    # the caller, however many were pooled) and the WAL kept the row.
    for _ in range(3):
        with engine.connect() as connection, engine.connect() as second:
            assert connection.exec_driver_sql("SELECT id FROM kept").scalar_one() == 42
            assert second.exec_driver_sql("SELECT 1").scalar_one() == 1
    engine.dispose()


def test_a_live_pooled_connection_is_kept_even_above_descriptor_1023(database_url) -> None:  # type: ignore[no-untyped-def]
    # A web process holding a thousand open streams has descriptors above select()'s limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2048, hard), hard))
    # Every free descriptor up to 1100 taken, with the collector off until the connection is open: a finalizer of
    # an earlier test's garbage (a socket) run meanwhile freed a low descriptor, which the connection then got.
    gc.collect()
    gc.disable()
    try:
        filler = _descriptors_up_to(1100)
        engine = make_engine(database_url, pool_size=1)
        connection = engine.connect()
    finally:
        gc.enable()
    try:
        with connection:
            assert connection.connection.dbapi_connection.fileno() > 1023
            backend = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        for _ in range(3):
            with engine.connect() as connection:
                assert connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one() == backend, \
                    "the checkout check threw a live connection away"
    finally:
        engine.dispose()
        for fd in filler:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _descriptors_up_to(highest: int) -> list[int]:
    """Open descriptors (of /dev/null) until one above ``highest``: every lower free number is then taken."""
    opened = [os.open(os.devnull, os.O_RDONLY)]
    while opened[-1] <= highest:
        opened.append(os.open(os.devnull, os.O_RDONLY))
    return opened


def _web_app(settings: Settings):  # type: ignore[no-untyped-def]
    from api import WebDeps, create_app

    deps = WebDeps.build(settings)
    app = create_app(settings, deps)
    app.config["TESTING"] = True
    return app, deps


def _post_chat(client, text_: str = "Hello there"):  # type: ignore[no-untyped-def]
    return client.post("/chat", data=json.dumps({"text": text_}), content_type="application/json", buffered=False)


def _assert_unavailable(response, dependency: str) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) > 0
    error = response.get_json()["error"]
    assert error["code"] == "dependency_unavailable" and error["dependency"] == dependency
    assert "unavailable" in error["message"] and "nothing was queued" in error["message"]


def test_chat_answers_503_while_redis_is_down_and_works_once_it_is_back(settings, db_engine, own_redis) -> None:
    app, deps = _web_app(replace(settings, redis_url=own_redis.url))
    client = app.test_client()
    kill9(own_redis.pid)
    _assert_unavailable(_post_chat(client), "redis")
    health = client.get("/healthz")
    assert health.status_code == 503 and "redis" in health.get_json()["down"]
    own_redis.restart()
    response = _post_chat(client)
    assert response.status_code == 200
    assert Queue(PROMPT_QUEUE, connection=deps.redis).count == 1
    assert "redis" not in client.get("/healthz").get_json()["down"]
    response.close()
    deps.fanout.stop()
    deps.engine.dispose()


def test_chat_answers_503_while_postgres_is_down_and_works_once_it_is_back(settings, real_redis,
                                                                           own_postgres) -> None:
    engine = make_engine(own_postgres.url)
    upgrade_head(engine)
    engine.dispose()
    app, deps = _web_app(replace(settings, database_url=own_postgres.url))
    client = app.test_client()
    kill9(own_postgres.pid)
    _assert_unavailable(_post_chat(client), "postgres")
    assert Queue(PROMPT_QUEUE, connection=real_redis).count == 0, "nothing is queued for a refused request"
    health = client.get("/healthz")
    assert health.status_code == 503 and "postgres" in health.get_json()["down"]
    supervise_until_back(own_postgres)
    assert _post_chat(client).status_code == 200
    assert Queue(PROMPT_QUEUE, connection=real_redis).count == 1
    deps.fanout.stop()
    deps.engine.dispose()


def test_fan_out_and_an_open_stream_ride_out_a_redis_restart(own_redis) -> None:
    client = redis.Redis.from_url(own_redis.url)
    log, fanout = EventLog(client), FanOut(client)
    channel = request_channel("restart-1")
    log.publish(channel, "status", {"stage": "processing"})
    frames: list[str] = []
    # Neither a keepalive nor a poll comes within the test: only the fan-out can wake the stream.
    limits = StreamLimits(keepalive_s=30, still_working_s=60, cap_s=60, poll_s=30)

    def read() -> None:
        frames.extend(follow(log, fanout, channel, None, limits, check_lost=True))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert wait_until(lambda: frames, timeout=10)
    kill9(own_redis.pid)
    time.sleep(1.5)  # the stream and the fan-out both notice the outage
    own_redis.restart()
    log.publish(channel, "message", {"text": "after the restart"})
    log.publish(channel, "done", {"duration_ms": 1})
    reader.join(timeout=15)
    assert not reader.is_alive(), "the reconnected fan-out woke the stream for the events logged after the restart"
    parsed = [f for f in parse_frames(frames) if not f.comment]
    assert [f.event for f in parsed] == ["status", "message", "done"]
    fanout.stop()


def test_a_stream_whose_log_did_not_survive_ends_with_an_error(own_redis) -> None:
    client = redis.Redis.from_url(own_redis.url)
    log, fanout = EventLog(client), FanOut(client)
    channel = request_channel("lost-1")
    log.publish(channel, "status", {"stage": "processing"})
    frames: list[str] = []
    limits = StreamLimits(keepalive_s=0.5, still_working_s=60, cap_s=60, poll_s=0.5)
    reader = threading.Thread(target=lambda: frames.extend(follow(log, fanout, channel, None, limits,
                                                                  check_lost=True)), daemon=True)
    reader.start()
    assert wait_until(lambda: frames, timeout=10)
    kill9(own_redis.pid)
    # An external Redis without persistence comes back empty.
    for name in ("appendonlydir", "dump.rdb"):
        path = own_redis.dir / name
        if path.is_dir():
            for child in path.iterdir():
                child.unlink()
        elif path.exists():
            path.unlink()
    own_redis.restart()
    reader.join(timeout=15)
    assert not reader.is_alive()
    parsed = [f for f in parse_frames(frames) if not f.comment]
    assert [f.event for f in parsed] == ["status", "error", "done"]
    assert "lost" in parsed[1].data["message"]
    fanout.stop()


def _schedule_now(connection: redis.Redis, job_id: str) -> None:
    Queue(PROMPT_QUEUE, connection=connection).enqueue_in(timedelta(seconds=0), "workers.digest.run", "r",
                                                           job_id=job_id)


def test_mover_takes_over_the_lock_of_a_dead_scheduler_and_runs_the_retry_now(real_redis) -> None:
    # A worker killed with its scheduler: the lock stays for a minute, nobody heart-beats.
    real_redis.set(RQScheduler.get_locking_key(PROMPT_QUEUE), "dead-scheduler", ex=61)
    _schedule_now(real_redis, "retry-1")
    mover = ScheduledMover(real_redis)
    assert PROMPT_QUEUE in mover.tick()
    assert Queue(PROMPT_QUEUE, connection=real_redis).job_ids == ["retry-1"]
    assert ScheduledJobRegistry(PROMPT_QUEUE, connection=real_redis).count == 0


def test_mover_leaves_a_live_schedulers_queue_alone(real_redis) -> None:
    live = RQScheduler([PROMPT_QUEUE], connection=real_redis, name="live-scheduler")
    live.acquire_locks()
    live.register_birth()
    mover = ScheduledMover(real_redis)
    assert PROMPT_QUEUE not in mover.tick()
    assert real_redis.get(RQScheduler.get_locking_key(PROMPT_QUEUE)) == b"live-scheduler"
    live.release_locks()


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
@pytest.mark.parametrize("kind", ["facts", "episodes"])
def test_ids_beyond_bigint_are_a_404_not_a_500(client, kind: str, method: str) -> None:
    for raw in ("99999999999999999999", "9223372036854775808", "0"):
        response = client.open(f"/memory/{kind}/{raw}", method=method, json={})
        assert response.status_code == 404, (raw, response.status_code)
        assert response.get_json()["error"]["code"] == "not_found"
    assert client.open(f"/memory/{kind}/9223372036854775807", method=method, json={}).status_code == 404


@pytest.mark.parametrize("lost", [("message", "done", "output"), ("done", "output"), ("done",)],
                         ids=["before-message", "between-message-and-output", "before-done"])
def test_a_retry_after_a_crash_at_the_end_completes_the_stream_exactly_once(client, run_jobs, fake_llm, real_redis,
                                                                            lost: tuple[str, ...]) -> None:
    from workers.digest import run

    fake_llm.script(Reply("Said once."))
    response = _post_chat(client, "tell me one fact about owls")  # RESPOND: a reply of any shape
    request_id = response.headers["X-Request-ID"]
    run_jobs((PROMPT_QUEUE,))
    # Undo what the dead worker had not done yet when it was killed.
    log_key = f"events:{request_channel(request_id)}"
    for entry_id, fields in real_redis.xrange(log_key):
        if fields[b"event"].decode() in lost:
            real_redis.xdel(log_key, entry_id)
    # The log's record of its ending events goes with them (it is written in the same script).
    real_redis.hdel(ENDS_KEY % request_channel(request_id), *({"message": "outcome", "done": "done"}[kind]
                                                              for kind in lost if kind != "output"))
    if "output" in lost:
        real_redis.delete(f"output:{request_id}")
    run(request_id)  # the retry
    kinds = [fields[b"event"].decode() for _, fields in real_redis.xrange(log_key)]
    assert kinds.count("message") == 1 and kinds.count("done") == 1 and kinds[-1] == "done"
    stored = EventLog(real_redis).get_output(request_id)
    assert stored is not None and stored["text"] == "Said once."


def test_a_scheduler_restarted_after_a_kill_takes_over_leadership_at_once(real_redis) -> None:
    import subprocess
    import sys

    from workers.scheduler import LEADER_KEY, Leadership

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    real_redis.set(LEADER_KEY, f"{socket.gethostname()}:{dead.pid}:old", ex=30)
    successor = Leadership(real_redis)
    assert successor.hold(), "the lease of a process that is gone does not block its successor"
    assert not Leadership(real_redis).hold(), "a live leader keeps its lease"
    assert real_redis.get(LEADER_KEY).decode() == successor.token
