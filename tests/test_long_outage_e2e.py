"""Redis unreachable for longer than the job lease while the digest worker lives, on `engram run`.

Two ways, each for 30 s (three times the job lease) in the middle of a reply: the embedded Valkey
frozen (SIGSTOP: every process waits, nobody errs), and a partition between one digest worker on
a second "host" and Redis (a relay that holds every byte: the worker waits, while the janitor on
the first host sees its lease lapse and hands the job to the first host's digest worker, so two
runs of one request are alive at once). The person must still get one `message` on the request's
stream (the log any reader replays, not only what one client saw) and one stored exchange.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import redis

from services.janitor import LEASE_TTL_S
from services.streams import LOG_KEY, request_channel
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply
from tests.relay import TcpRelay
from tests.servers import wait_until
from tests.system import FrameReader, System, chat, read_stream, running_system
from tests.test_faults_e2e import exchanges_stored, redis_pid, run_turn
from tests.test_scale_out import HOST2, _second_host, _wait_for_job_on, wait_for_worker, worker_of

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

REAL = "Otters hold hands while they sleep so they do not drift apart, and wake up where they slept."
OUTAGE_S = 3 * LEASE_TTL_S


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[System]:
    data_dir = tmp_path_factory.mktemp("outage") / "data"
    data_dir.mkdir()
    with running_system(data_dir, OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                        ENGRAM_DIGEST_WORKERS="1") as engram:
        yield engram


@pytest.fixture(autouse=True)
def fresh_script(llm: FakeLLM) -> None:
    llm.reset()
    llm.route("MEMORY CHUNK", Json({"gists": ["The user asked about otters."], "facts": [], "entities": [],
                                    "emotion": "curious", "salience": 0.1, "open_loops": []}))


def test_redis_frozen_longer_than_the_lease_mid_reply_gives_one_message(system: System, llm: FakeLLM) -> None:
    # The first run streams for about 5 s; a second run (the retry) answers at once with the same text.
    llm.script_stream(Reply(REAL, chunk_size=2, per_chunk_delay_s=0.1), Reply(REAL), Reply(REAL))
    pid = redis_pid(system)
    with chat(system, "Tell me a fact about otters, slowly.", read_timeout_s=180) as response:
        assert response.status_code == 200
        request_id = response.headers["X-Request-ID"]
        reader = FrameReader(response)
        frames = reader.read(stop_after=3)  # processing, thinking, the first delta
        assert frames[-1].event == "delta", [f.event for f in frames]
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(OUTAGE_S)
        finally:
            os.kill(pid, signal.SIGCONT)
        frames += reader.read()
    seen = [f.event for f in frames if f.event in ("message", "error")]
    assert seen == ["message"], f"the client saw {seen}\n{system.log_tail()}"
    assert_one_message_logged(system, request_id)
    # A little later (a late retry would publish by now): still one message in the log.
    time.sleep(2 * LEASE_TTL_S)
    assert_one_message_logged(system, request_id)


def test_a_worker_cut_off_from_redis_longer_than_the_lease_does_not_reply_twice(
        system: System, llm: FakeLLM, tmp_path: Path) -> None:
    redis_url, database_url = system.urls()
    connection = redis.Redis.from_url(redis_url)
    relay = TcpRelay(int(urlsplit(redis_url).port or 0))
    home = tmp_path / "host2"
    try:
        host2_url = f"redis://127.0.0.1:{relay.port}/0"
        with contextmanager(_second_host)(home, host2_url, database_url, llm.url, None) as host2:
            wait_for_worker(connection, HOST2, host2, home / "worker.log")
            # Each reply streams for about 6 s: both hosts' workers are busy when the link goes.
            llm.script_stream(*[Reply(REAL, chunk_size=3, per_chunk_delay_s=0.2) for _ in range(3)])
            with ThreadPoolExecutor(2) as pool:
                futures = [pool.submit(run_turn, system, "Tell me a fact about otters, slowly.") for _ in range(2)]
                victim = _wait_for_job_on(connection, HOST2, earlier=set())
                # Mid-reply: its first deltas are out (the run is past its start, streaming).
                assert wait_until(lambda: _logged(connection, victim, "delta"), 60)
                relay.hold()
                try:
                    time.sleep(OUTAGE_S)
                finally:
                    relay.release()
                results = [future.result() for future in futures]
            assert victim in [request_id for request_id, _ in results]
            assert worker_of(connection, victim) != HOST2, "the first host's worker took the job over"
            for request_id, frames in results:
                seen = [f.event for f in frames if f.event in ("message", "error")]
                assert seen == ["message"], f"{request_id}: the client saw {seen}"
            time.sleep(2 * LEASE_TTL_S)  # the cut-off run has had its say by now
            assert host2.poll() is None, "the cut-off worker lives on"
            for request_id, _ in results:
                assert_one_message_logged(system, request_id)
    finally:
        relay.close()


def _logged(connection: redis.Redis, request_id: str, event: str) -> bool:
    rows = connection.xrange(LOG_KEY % request_channel(request_id))
    return any(fields[b"event"].decode() == event for _, fields in rows)


def assert_one_message_logged(system: System, request_id: str) -> None:
    """The request's log, as any reader replays it: one ``message``, no ``error``, and one stored exchange."""
    with httpx.Client(timeout=60) as client, client.stream(
        "GET", f"{system.base_url}/chat/{request_id}/events"
    ) as replay:
        replayed = [f.event for f in read_stream(replay)]
    assert [e for e in replayed if e in ("message", "error")] == ["message"], replayed
    assert exchanges_stored(system, request_id) == 1
