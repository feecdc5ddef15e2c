"""Fault tests on `engram run` (embedded Valkey and PostgreSQL, real processes, scripted LLM).

Redis and PostgreSQL are killed with SIGKILL before, during and after a turn; the supervisor
brings them back and every role reconnects by itself. The LLM endpoint times out, rate-limits,
fails, sends garbage and cuts a stream off. Every accepted message must end in `message` (the
real reply, where a retry can succeed) or `error`, and every exchange is stored exactly once.
One system serves the whole module: recovering from each fault is the point.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from services.db import sqlalchemy_url
from services.embedded.lifecycle import wait_gone
from services.settings import PROJECT_ROOT
from tests.fake_llm import FakeLLM
from tests.llm_steps import Cut, Error, Garbage, Hang, Json, Reply
from tests.sse import Frame
from tests.system import FrameReader, System, chat, read_stream, running_system

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

REAL = "Otters hold hands while they sleep so they do not drift apart."
REPLY_TIMEOUT_S = 3.0  # the user-facing roles' LLM timeout in this module's configs
RECOVERY_TIMEOUT_S = 90.0
POSTGRES_DOWN_S = 20.0  # longer than a digest job's retries (1 s, then 5 s) last
USER_FACING_ROLES = ("respond", "clarify", "acknowledge")
API_KEY = "sk-faults-never-log-me-0123456789"


@pytest.fixture(autouse=True)
def fresh_script(llm: FakeLLM) -> None:
    llm.reset()
    llm.route("MEMORY CHUNK", Json({"gists": ["The user asked about otters."], "facts": [], "entities": [],
                                    "emotion": "curious", "salience": 0.1, "open_loops": []}))


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[System]:
    root = tmp_path_factory.mktemp("faults")
    configs = root / "configs"
    shutil.copytree(PROJECT_ROOT / "configs", configs)
    # Short LLM timeouts for the reply roles, so the timeout fault takes seconds, not a minute.
    _shorten_timeouts(configs / "agents.toml")
    data_dir = root / "data"
    data_dir.mkdir()
    with running_system(data_dir, OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false", OPENAI_API_KEY=API_KEY,
                        ENGRAM_CONFIGS_DIR=str(configs)) as engram:
        yield engram


def _shorten_timeouts(agents: Path) -> None:
    """Set ``timeout_s`` of the user-facing roles in place (TOML forbids naming a table twice)."""
    lines: list[str] = []
    role = None
    for line in agents.read_text().splitlines():
        if line.startswith("["):
            role = line.strip().strip("[]")
        if role in USER_FACING_ROLES and line.startswith("timeout_s"):
            continue
        lines.append(line)
        if line.startswith("[") and role in USER_FACING_ROLES:
            lines.append(f"timeout_s = {REPLY_TIMEOUT_S}")
    agents.write_text("\n".join(lines) + "\n")


# --- helpers ---------------------------------------------------------------------------------

def exchanges_stored(system: System, request_id: str) -> int:
    _, database_url = system.urls()
    engine = create_engine(sqlalchemy_url(database_url))
    try:
        with engine.connect() as db:
            return int(db.execute(text("SELECT count(*) FROM exchanges WHERE request_id = :r"),
                                  {"r": request_id}).scalar_one())
    finally:
        engine.dispose()


def outcome(frames: list[Frame]) -> list[Frame]:
    """The terminal events of a turn: exactly one ``message`` or ``error``, then ``done``."""
    assert frames and frames[-1].event == "done", f"the stream ends with done: {[f.event for f in frames]}"
    return [f for f in frames if f.event in ("message", "error")]


def assert_answered_once(system: System, request_id: str, frames: list[Frame], reply: str = REAL) -> None:
    final = outcome(frames)
    assert [f.event for f in final] == ["message"], [(f.event, f.data) for f in final]
    assert final[0].data["text"] == reply
    assert exchanges_stored(system, request_id) == 1


def redis_pid(system: System) -> int:
    return int((system.data_dir / "redis" / "valkey.pid").read_text().strip())


def postgres_pid(system: System) -> int:
    return int((system.data_dir / "postgres" / "postmaster.pid").read_text().splitlines()[0])


def kill9(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)


def _servers_and_roles_ok(health: dict) -> bool:  # type: ignore[type-arg]
    """Every check but the LLM's is green: an earlier LLM-fault test's failed turn keeps the LLM check red
    until a turn succeeds, which is what /healthz should say, and not what these tests wait for."""
    return all(check["ok"] for name, check in health.get("checks", {}).items() if name != "llm")


def wait_healthy(system: System, old_pid: int, pid_of) -> None:  # type: ignore[no-untyped-def]
    """Until the server runs again (a new pid) and /healthz is green: every role has reconnected."""
    deadline = time.monotonic() + RECOVERY_TIMEOUT_S
    last = None
    while time.monotonic() < deadline:
        try:
            restarted = pid_of(system) != old_pid
            last = httpx.get(system.base_url + "/healthz", timeout=5)
            if restarted and _servers_and_roles_ok(last.json()):
                return
        except (OSError, ValueError, IndexError, httpx.HTTPError):
            pass
        time.sleep(0.25)
    pytest.fail(f"not healthy again after the kill: {last.text if last is not None else 'no answer'}\n"
                f"{system.log_tail()}")


def run_turn(system: System, text_: str, **extra: object) -> tuple[str, list[Frame]]:
    with chat(system, text_, read_timeout_s=120, **extra) as response:
        assert response.status_code == 200, response.read()
        return response.headers["X-Request-ID"], read_stream(response)


def kill_mid_turn(system: System, llm: FakeLLM, pid_of) -> tuple[str, list[Frame]]:  # type: ignore[no-untyped-def]
    """A turn whose reply streams for a few seconds; the server dies after the first delta."""
    llm.script_stream(Reply(REAL, chunk_size=2, per_chunk_delay_s=0.1), Reply(REAL))
    with chat(system, "Tell me a fact about otters, slowly.", read_timeout_s=120) as response:
        request_id = response.headers["X-Request-ID"]
        reader = FrameReader(response)
        frames = reader.read(stop_after=3)  # processing, thinking, the first delta
        assert frames[-1].event == "delta", [f.event for f in frames]
        old_pid = pid_of(system)
        kill9(old_pid)
        frames += reader.read()
    wait_healthy(system, old_pid, pid_of)
    return request_id, frames


# --- the proactive stream ----------------------------------------------------------------------

def test_events_stream_sends_its_headers_at_once(system: System) -> None:
    # The keepalive comes every 15 s; the headers must not wait for it.
    with httpx.Client(timeout=httpx.Timeout(10, read=5)) as client, client.stream(
        "GET", system.base_url + "/events"
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert next(response.iter_text()).startswith(":")


# --- the LLM endpoint ------------------------------------------------------------------------

@pytest.mark.parametrize("fault", [
    Hang(REPLY_TIMEOUT_S + 5),
    Error(429, headers={"Retry-After": "1"}),
    Error(500),
    Garbage(),
    Cut(REAL, after_chunks=3),
], ids=["timeout", "429-retry-after", "500", "malformed-stream", "cut-mid-reply"])
def test_an_llm_fault_is_retried_and_the_real_reply_arrives(system: System, llm: FakeLLM, fault) -> None:
    llm.script_stream(fault, Reply(REAL, chunk_size=6))
    request_id, frames = run_turn(system, "Tell me a fact about otters.")
    assert_answered_once(system, request_id, frames)


def test_an_llm_that_keeps_failing_gets_the_apology_stored_once(system: System, llm: FakeLLM) -> None:
    llm.script_stream(Error(500), Cut(REAL, after_chunks=1))
    request_id, frames = run_turn(system, "Tell me a fact about otters.")
    final = outcome(frames)
    assert [f.event for f in final] == ["message"] and "trouble" in final[0].data["text"]
    assert exchanges_stored(system, request_id) == 1


# --- Redis and PostgreSQL killed -9 ---------------------------------------------------------

# The same two faults for either server: each is killed -9 and restarted by the supervisor.
SERVER_PIDS = pytest.mark.parametrize("pid_of", [redis_pid, postgres_pid], ids=["redis", "postgres"])


@SERVER_PIDS
def test_server_killed_before_a_turn(system: System, llm: FakeLLM, pid_of) -> None:  # type: ignore[no-untyped-def]
    old = pid_of(system)
    kill9(old)
    wait_healthy(system, old, pid_of)
    llm.script_stream(Reply(REAL))
    request_id, frames = run_turn(system, "Tell me a fact about otters.")
    assert_answered_once(system, request_id, frames)


@SERVER_PIDS
def test_server_killed_during_a_turn(system: System, llm: FakeLLM, pid_of) -> None:  # type: ignore[no-untyped-def]
    request_id, frames = kill_mid_turn(system, llm, pid_of)
    assert_answered_once(system, request_id, frames)


def test_redis_killed_after_a_turn(system: System, llm: FakeLLM) -> None:
    llm.script_stream(Reply(REAL), Reply("And they have pockets for their favourite stones."))
    request_id, frames = run_turn(system, "Tell me a fact about otters.")
    assert_answered_once(system, request_id, frames)
    thread_id = frames[0].data["thread_id"]
    old = redis_pid(system)
    kill9(old)
    wait_healthy(system, old, redis_pid)
    # The append-only file kept the request's event log: a late reader gets the whole turn again.
    with httpx.Client(timeout=30) as client, client.stream(
        "GET", f"{system.base_url}/chat/{request_id}/events"
    ) as replay:
        assert_answered_once(system, request_id, read_stream(replay))
    second_id, second = run_turn(system, "Tell me another one.", thread_id=thread_id)
    assert_answered_once(system, second_id, second, "And they have pockets for their favourite stones.")



def test_postgres_killed_after_a_turn(system: System, llm: FakeLLM) -> None:
    llm.script_stream(Reply(REAL), Reply("And they have pockets for their favourite stones."))
    request_id, frames = run_turn(system, "Tell me a fact about otters.")
    assert_answered_once(system, request_id, frames)
    thread_id = frames[0].data["thread_id"]
    old = postgres_pid(system)
    kill9(old)
    wait_healthy(system, old, postgres_pid)
    assert exchanges_stored(system, request_id) == 1, "the write-ahead log kept the stored exchange"
    second_id, second = run_turn(system, "Tell me another one.", thread_id=thread_id)
    assert_answered_once(system, second_id, second, "And they have pockets for their favourite stones.")


def test_a_turn_outlives_postgres_down_longer_than_its_retries(system: System, llm: FakeLLM) -> None:
    """PostgreSQL killed -9 and kept down for 20 s, longer than a digest job's retries (1 s, 5 s) last: in the
    soak its crash recovery took 10-30 s and two chats ended in `error`. The turn waits for the database."""
    llm.script_stream(Reply(REAL), Reply("And they have pockets for their favourite stones."))
    assert_answered_once(system, *run_turn(system, "Tell me a fact about otters."))  # the thread is now current
    supervisor, old = system.process.pid, postgres_pid(system)
    os.kill(supervisor, signal.SIGSTOP)  # nobody restarts PostgreSQL while the supervisor is frozen
    resume = threading.Timer(POSTGRES_DOWN_S, os.kill, args=(supervisor, signal.SIGCONT))
    try:
        kill9(old)
        resume.start()
        # Accepted without the database (the current thread is in Redis); its digest job finds none.
        request_id, frames = run_turn(system, "Tell me another one.")
        assert postgres_pid(system) != old, "the turn ended before PostgreSQL was back: it never waited"
    finally:
        resume.cancel()
        os.kill(supervisor, signal.SIGCONT)
    assert_answered_once(system, request_id, frames, "And they have pockets for their favourite stones.")
    wait_healthy(system, old, postgres_pid)


def test_no_role_logged_a_message_reply_or_key_at_info(system: System) -> None:
    """Last in the module: after every fault above, the log of every process `engram run` started (web with its
    access log, digest, memory workers, scheduler, supervisor; INFO and up) holds no chat text and no key."""
    log = system.log_path.read_text(errors="replace")
    assert '"level": "INFO"' in log and "POST /chat" in log, "the test read no INFO logs of the turns"
    for secret in (API_KEY, "otters", "Otters", "favourite stones", "Tell me another one"):
        assert secret not in log, f"{secret!r} is in the logs"
