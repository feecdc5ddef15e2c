"""Scale-out: digest workers on a second "host" share the work through Redis and PostgreSQL alone.

The first host is `engram run` on the embedded default. The second host is a plain
`rq worker ... -w workers.startup.EngramWorker` started with a scrubbed environment: it knows
only ``REDIS_URL`` and ``DATABASE_URL`` (plus the LLM endpoint every worker needs, and PATH /
PYTHONPATH to find the code), runs in its own working and data directory, and shares no file
with the first host. Where the machine allows it (tests/netns.py), it also runs in its own network
namespace: it cannot reach the first host's loopback, only the first host's address on a veth
pair, where relays stand in for the network to Redis, PostgreSQL and the LLM.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import redis
from rq import Queue, Worker
from rq.job import Job
from sqlalchemy import create_engine, text

from services.db import sqlalchemy_url
from services.queues import PROMPT_QUEUE
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply
from tests.netns import Namespace, network_namespace, relays
from tests.system import ROOT, FrameReader, System, running_system

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

USERS = {f"scale-token-{n:04d}": f"user{n}" for n in range(6)}
HOST2 = "host2-digest"
READY_TIMEOUT_S = 180
SLOW = "A slow reply that a crash may cut off. " * 3


@pytest.fixture(autouse=True)
def memory_calls_answered(llm: FakeLLM) -> None:
    """Memory workers' LLM calls get their own answers, so they never take a chat's scripted reply."""
    llm.reset()
    llm.route("MEMORY CHUNK", Json({"gists": ["a chat"], "facts": [], "entities": [], "emotion": "neutral",
                                    "salience": 0.2, "open_loops": []}))
    llm.route("EPISODE", Json({"title": "chat", "gist": "a chat", "summary": "a chat", "intent": "", "emotion": "",
                               "outcome": "", "salience": 0.2, "open_loops": []}))


@pytest.fixture(scope="module")
def host1(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[System]:
    tokens = ",".join(f"{token}:{user}" for token, user in USERS.items())
    with running_system(tmp_path_factory.mktemp("host1"), OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                        ENGRAM_API_TOKENS=tokens, ENGRAM_DIGEST_WORKERS="1") as engram:
        yield engram


@contextmanager
def second_host(home: Path, redis_url: str, database_url: str, llm_url: str) -> Iterator[subprocess.Popen[bytes]]:
    """Digest worker(s) of another host: a scrubbed environment, its own directories, no shared files,
    and its own network namespace where the machine allows one."""
    with network_namespace("host2") as namespace:
        if namespace is None:
            yield from _second_host(home, redis_url, database_url, llm_url, None)
            return
        urls = [redis_url, database_url, llm_url]
        ports = [urlsplit(url).port for url in urls]
        assert all(ports), urls
        assert not _reachable_from(namespace, "127.0.0.1", ports[0]), "the namespace reaches this host's loopback"
        with relays(namespace.host_ip, ports):  # type: ignore[arg-type]
            remote = [url.replace("127.0.0.1", namespace.host_ip) for url in urls]
            assert _reachable_from(namespace, namespace.host_ip, ports[0])
            yield from _second_host(home, *remote, namespace)


def _second_host(home: Path, redis_url: str, database_url: str, llm_url: str,
                 namespace: Namespace | None) -> Iterator[subprocess.Popen[bytes]]:
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(home),
        "REDIS_URL": redis_url, "DATABASE_URL": database_url,
        "OPENAI_BASE_URL": llm_url, "ENGRAM_LOCAL_LLM": "false",
        "ENGRAM_DATA_DIR": str(home / "data"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
    }
    rq_command = shutil.which("rq")
    assert rq_command, "the rq command is installed with Engram"
    argv = [rq_command, "worker", PROMPT_QUEUE, "-u", redis_url, "-w", "workers.startup.EngramWorker",
            "--worker-ttl", "30", "-n", HOST2]
    log = (home / "worker.log").open("wb")
    process = subprocess.Popen(namespace.command(argv) if namespace else argv,
                               cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def _reachable_from(namespace: Namespace, host: str, port: int) -> bool:
    probe = f"import socket; socket.create_connection(({host!r}, {port}), timeout=2).close()"
    return subprocess.run(namespace.command([sys.executable, "-c", probe]), capture_output=True).returncode == 0


def wait_for_worker(connection: redis.Redis, name: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the second host's worker exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        if any(worker.name == name for worker in Worker.all(queue=Queue(PROMPT_QUEUE, connection=connection))):
            return
        time.sleep(0.5)
    pytest.fail(f"the second host's worker never registered:\n{log.read_text()[-3000:]}")


def chat_as(engram: System, token: str, message: str) -> tuple[str, list]:  # type: ignore[type-arg]
    """One chat over HTTP with a user's token; (request id, frames up to `done`)."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(timeout=httpx.Timeout(120, read=120)) as client, client.stream(
        "POST", engram.base_url + "/chat", json={"text": message}, headers=headers
    ) as response:
        assert response.status_code == 200, response.read()
        return response.headers["X-Request-ID"], FrameReader(response).read()


def worker_of(connection: redis.Redis, request_id: str) -> str | None:
    return Job.fetch(f"digest-{request_id}", connection=connection).worker_name


def stored_per_request(database_url: str, request_ids: list[str]) -> dict[str, int]:
    engine = create_engine(sqlalchemy_url(database_url))
    try:
        with engine.connect() as db:
            rows = db.execute(text("SELECT request_id, count(*) FROM exchanges WHERE request_id = ANY(:ids) "
                                   "GROUP BY request_id"), {"ids": request_ids}).all()
    finally:
        engine.dispose()
    return {request_id: count for request_id, count in rows}


def test_a_second_host_takes_work_and_killing_it_loses_nothing(host1: System, llm: FakeLLM, tmp_path: Path) -> None:
    redis_url, database_url = host1.urls()
    connection = redis.Redis.from_url(redis_url)
    home = tmp_path / "host2"
    with second_host(home, redis_url, database_url, llm.url) as host2:
        wait_for_worker(connection, HOST2, host2, home / "worker.log")

        # 1. It takes work: four users chat at once; each reply takes a moment, so both hosts are busy.
        llm.script_stream(*[Reply(f"Reply number {n}.", chunk_size=4, per_chunk_delay_s=0.1) for n in range(4)])
        tokens = list(USERS)[:4]
        with ThreadPoolExecutor(len(tokens)) as pool:
            results = list(pool.map(lambda t: chat_as(host1, t, "Tell me something nice."), tokens))
        for _, frames in results:
            assert [f.event for f in frames if f.event in ("message", "error")] == ["message"], frames
        workers = {worker_of(connection, request_id) for request_id, _ in results}
        assert HOST2 in workers, f"the second host answered nothing: {workers}"
        assert len(workers) == 2, f"both hosts should have answered: {workers}"
        assert stored_per_request(database_url, [r for r, _ in results]) == {r: 1 for r, _ in results}

        # 2. Killing it mid-reply loses nothing: two users chat at once (one job per host), the
        # second host is killed -9 while it streams, and its job is answered by the first host.
        llm.script_stream(*[Reply(SLOW, chunk_size=3, per_chunk_delay_s=0.15) for _ in range(3)])
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(chat_as, host1, token, "Please survive a crash.") for token in list(USERS)[4:6]]
            victim = _wait_for_job_on(connection, HOST2, earlier={request_id for request_id, _ in results})
            os.kill(host2.pid, signal.SIGKILL)
            results = [future.result() for future in futures]
    request_ids = [request_id for request_id, _ in results]
    assert victim in request_ids
    for request_id, frames in results:
        outcome = [f for f in frames if f.event in ("message", "error")]
        assert [f.event for f in outcome] == ["message"], f"{request_id}: {[(f.event, f.data) for f in frames]}"
        if request_id == victim:  # retried on the first host, with a whole reply (not the cut-off stream)
            assert worker_of(connection, request_id) != HOST2
            assert outcome[0].data["text"] == stored_reply(database_url, request_id)
            assert outcome[0].data["text"] == SLOW.strip()
    assert stored_per_request(database_url, request_ids) == {r: 1 for r in request_ids}, "a reply was lost or doubled"


def stored_reply(database_url: str, request_id: str) -> str:
    engine = create_engine(sqlalchemy_url(database_url))
    try:
        with engine.connect() as db:
            return db.execute(text("SELECT reply FROM exchanges WHERE request_id = :r"), {"r": request_id}).scalar_one()
    finally:
        engine.dispose()


def _wait_for_job_on(connection: redis.Redis, worker_name: str, earlier: set[str]) -> str:
    """The request id of the digest job that ``worker_name`` is running, once it has streamed a little.

    Not one of the ``earlier`` requests: their replies are out, but a digest job goes on after its reply (the
    exchange is stored and turned into memory), so the worker may still be finishing one of them.
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for worker in Worker.all(queue=Queue(PROMPT_QUEUE, connection=connection)):
            job_id = str(worker.get_current_job_id() or "") if worker.name == worker_name else ""
            request_id = job_id.removeprefix("digest-")
            if job_id.startswith("digest-") and request_id not in earlier:
                time.sleep(0.5)  # mid-reply: the first deltas are out
                return request_id
        time.sleep(0.05)
    pytest.fail(f"{worker_name} never started a job")
