"""End to end: `engram run` on the embedded default (its own PostgreSQL + Redis), real processes.

One system is started for the module (it takes a while: servers, migrations, models) and
the tests talk to it over HTTP like any client would; the LLM is our scripted server.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import httpx
import psutil
import pytest
import redis
from rq import Queue, Worker
from sqlalchemy import create_engine, text

from services.db import sqlalchemy_url
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply
from tests.system import FrameReader, System, chat, read_stream, running_system

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

CHUNK = {
    "gists": ["The user is planning a hiking trip through Patagonia."],
    "facts": [{"text": "The user is planning a hiking trip to Patagonia next spring.", "speaker": "user",
               "confidence": 0.9}],
    "entities": [{"name": "Patagonia", "type": "place"}], "emotion": "excited", "salience": 0.7, "open_loops": [],
}
EPISODE = {
    "title": "Planning a Patagonia trek", "gist": "The user planned a spring hiking trip to Patagonia.",
    "summary": "The user is planning to hike in Patagonia next spring and asked about boots.",
    "intent": "plan a trip", "emotion": "excited", "outcome": "got boot advice", "salience": 0.7,
    "open_loops": ["buy boots"],
}


@pytest.fixture(scope="module")
def e2e_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def quiet_background_llm_calls(e2e_llm: FakeLLM) -> None:
    """Reset the script; the memory workers' calls get their own answers so they never take a chat's."""
    e2e_llm.reset()
    e2e_llm.route("MEMORY CHUNK", Json(CHUNK))
    e2e_llm.route("EPISODE", Json(EPISODE))


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory, e2e_llm: FakeLLM) -> Iterator[System]:
    data_dir = tmp_path_factory.mktemp("engram-data")
    with running_system(data_dir, OPENAI_BASE_URL=e2e_llm.url, ENGRAM_LOCAL_LLM="false") as engram:
        yield engram


def test_healthz_reports_each_dependency(system: System) -> None:
    body = httpx.get(system.base_url + "/healthz", timeout=5).json()
    assert body["status"] == "ok"
    assert {"redis", "postgres", "digest_workers", "llm"} <= set(body["checks"])


def test_chat_over_http_streams_and_stores(system: System, e2e_llm: FakeLLM) -> None:
    e2e_llm.script(Reply("Hello from the end-to-end test.", chunk_size=5))
    with chat(system, "Say hello to the end-to-end test, please.") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        request_id = response.headers["X-Request-ID"]
        frames = read_stream(response)
    kinds = [f.event for f in frames]
    assert kinds[0] == "status" and frames[0].data["stage"] == "processing"
    assert "thinking" in [f.data.get("stage") for f in frames if f.event == "status"]
    assert kinds[-2:] == ["message", "done"] and "delta" in kinds
    assert all(f.id for f in frames)
    message = frames[-2].data
    assert message["text"] == "".join(f.data["text"] for f in frames if f.event == "delta")
    _, database_url = system.urls()
    engine = create_engine(sqlalchemy_url(database_url))
    with engine.connect() as connection:
        row = connection.execute(text("SELECT id, reply FROM exchanges WHERE request_id = :r"),
                                 {"r": request_id}).one()
    engine.dispose()
    assert row.id == message["exchange_id"] and row.reply == message["text"]


def test_dropped_client_reconnects_with_last_event_id(system: System, e2e_llm: FakeLLM) -> None:
    e2e_llm.script(Reply("A fairly slow answer that arrives in many small pieces.", chunk_size=4,
                         per_chunk_delay_s=0.05))
    with chat(system, "Tell me something slowly.") as response:
        request_id = response.headers["X-Request-ID"]
        first = read_stream(response, stop_after=2)
    assert len(first) == 2
    last_id = first[-1].id
    with httpx.Client(timeout=60) as again, again.stream(
        "GET", f"{system.base_url}/chat/{request_id}/events", headers={"Last-Event-ID": last_id}
    ) as resumed:
        rest = read_stream(resumed)
    assert rest[-1].event == "done" and rest[-2].event == "message"
    ids = [f.id for f in first + rest if f.event != "done"]
    assert len(ids) == len(set(ids)), "a resumed stream repeats nothing"
    deltas = "".join(f.data["text"] for f in first + rest if f.event == "delta")
    assert deltas == rest[-2].data["text"]


def test_bad_input_over_http(system: System) -> None:
    with httpx.Client(base_url=system.base_url, timeout=10) as client:
        assert client.post("/chat", json={"text": "  "}).status_code == 400
        assert client.post("/chat", content=b"{nope", headers={"Content-Type": "application/json"}).status_code == 400
        too_long = client.post("/chat", json={"text": "x" * 100_000})
        assert too_long.status_code == 413 and too_long.json()["error"]["message"]


def test_killing_the_digest_worker_mid_job_still_answers_once(system: System, e2e_llm: FakeLLM) -> None:
    redis_url, database_url = system.urls()
    connection = redis.Redis.from_url(redis_url)
    # The first attempt streams slowly so it can be killed mid-reply; the retry answers at once.
    # Streamed-only steps: the tie-breaker or a memory job must not take the reply meant for the turn.
    e2e_llm.script_stream(Reply("This reply will be cut off by a crash " * 4, chunk_size=3, per_chunk_delay_s=0.2),
                          Reply("Answered after the crash."))
    # The retry runs as soon as the janitor sees the lapsed lease, once the supervisor's replacement
    # worker has loaded its models: allow for a slow start on a loaded machine.
    with chat(system, "Please survive a crash.", read_timeout_s=180) as response:
        request_id = response.headers["X-Request-ID"]
        reader = FrameReader(response)
        frames = reader.read(stop_after=3)  # processing, thinking, first delta
        victims = _busy_digest_pids(connection)
        assert victims, "a digest worker should be running the job"
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        frames += reader.read()
    assert frames[-1].event == "done"
    outcome = [f for f in frames if f.event in ("message", "error")]
    assert [f.event for f in outcome] == ["message"], "the real reply, once, and no error"
    assert outcome[0].data["text"] == "Answered after the crash."
    assert {"stage": "retrying", "attempt": 2} in [f.data for f in frames if f.event == "status"]
    engine = create_engine(sqlalchemy_url(database_url))
    with engine.connect() as db:
        stored = db.execute(text("SELECT count(*) FROM exchanges WHERE request_id = :r"), {"r": request_id})
        count = stored.scalar_one()
    engine.dispose()
    assert count == 1


def test_a_real_conversation_becomes_chunks_facts_and_an_episode(system: System, e2e_llm: FakeLLM) -> None:
    """The topic switch closes the session; the chunker and episodic workers do the rest on their own."""
    thread_id = None
    for text_ in ("I'm planning a hiking trip through Patagonia next spring.",
                  "Which hiking boots handle Patagonian mud best?",
                  "Completely different topic: my sourdough starter smells of acetone."):
        extra = {"thread_id": thread_id} if thread_id else {}
        with chat(system, text_, **extra) as response:
            thread_id = response.headers["X-Thread-ID"]
            assert read_stream(response)[-1].event == "done"
    _, database_url = system.urls()
    engine = create_engine(sqlalchemy_url(database_url))
    # The episodic worker's turn comes after the chunker's on a loaded 2-core machine (90 s ran out at load 8).
    deadline = time.monotonic() + 240
    episode = None
    with engine.connect() as db:
        patagonia = db.execute(text("SELECT id FROM exchanges WHERE user_text LIKE :p ORDER BY id"),
                               {"p": "%Patagonia%"}).scalars().all()
        while episode is None and time.monotonic() < deadline:
            rows = db.execute(text("SELECT title, exchange_ids FROM episodes")).all()
            episode = next((row for row in rows if list(row.exchange_ids) == list(patagonia)), None)
            time.sleep(0.5)
        chunks = db.execute(text("SELECT count(*) FROM memory_chunks WHERE status = 'ok'")).scalar_one()
        facts = db.execute(text("SELECT text, speaker FROM facts")).all()
    engine.dispose()
    assert episode is not None, "an episode is created for the closed session"
    assert episode.title == "Planning a Patagonia trek"
    assert len(patagonia) == 2
    assert chunks >= 2
    assert ("The user is planning a hiking trip to Patagonia next spring.", "user") in [tuple(f) for f in facts]


def _busy_digest_pids(connection: redis.Redis) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        workers = Worker.all(queue=Queue("prompt-queue", connection=connection))
        busy = [w.pid for w in workers if w.get_current_job_id()]
        if busy:
            return busy
        time.sleep(0.05)
    return []


def test_a_burst_is_answered_first_and_every_exchange_is_chunked_afterwards(system: System) -> None:
    """Chat before housekeeping: the memory roles run at the lowest CPU priority, yet catch up on every exchange."""
    from concurrent.futures import ThreadPoolExecutor

    def one(n: int) -> str:
        while True:  # like any client, wait out the per-user rate limit (configs/limits.toml: a burst of 10)
            with chat(system, f"Burst message {n}: what should I pack for a weekend in the Alps?") as response:
                if response.status_code == 429:
                    time.sleep(float(response.headers["Retry-After"]))
                    continue
                assert read_stream(response)[-1].event == "done"
                return response.headers["X-Request-ID"]

    with ThreadPoolExecutor(6) as pool:
        request_ids = list(pool.map(one, range(16)))
    housekeeping = [child for child in psutil.Process(system.process.pid).children(recursive=True)
                    if any(q in " ".join(child.cmdline()) for q in ("memory-chunker-queue", "episodic-memory-queue"))]
    assert len(housekeeping) == 2 and all(child.nice() == 19 for child in housekeeping)
    _, database_url = system.urls()
    engine = create_engine(sqlalchemy_url(database_url))
    deadline, chunked = time.monotonic() + 240, -1
    with engine.connect() as db:
        while time.monotonic() < deadline:
            chunked = db.execute(text("SELECT count(*) FROM exchanges e JOIN memory_chunks c ON c.exchange_id = e.id "
                                      "WHERE e.request_id = ANY(:ids) AND c.status = 'ok'"),
                                 {"ids": request_ids}).scalar_one()
            if chunked == len(request_ids):
                break
            time.sleep(0.5)
    engine.dispose()
    assert chunked == len(request_ids), f"{chunked} of {len(request_ids)} exchanges chunked"


def test_sigterm_stops_everything(system: System) -> None:
    children = psutil.Process(system.process.pid).children(recursive=True)
    assert len(children) >= 6
    system.process.send_signal(signal.SIGTERM)
    assert system.process.wait(timeout=60) == 0  # how long it takes is printed by bench/pipeline.py
    time.sleep(0.5)
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"orphans left: {[c.cmdline() for c in alive]}"
    redis_url, _ = system.urls()
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(redis_url, socket_connect_timeout=1).ping()
