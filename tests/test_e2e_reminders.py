"""End to end on `engram run`: a reminder created over REST reaches its owner's GET /events once, never
another user's stream, and a recurring one fires again at its next occurrence.

The system runs with a test schedule (ENGRAM_SCHEDULES_FILE) firing reminders every second."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fake_llm import FakeLLM
from tests.sse import Frame, parse_frames
from tests.system import ROOT, System, running_system

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

ALICE, BOB = "alice-e2e-token", "bob-e2e-token1"
FAST_SCHEDULE = """
[services.reminders]
every_s = 1
queue = "periodic-queue"
job = "services.periodic.reminders.run"
"""


@pytest.fixture(scope="module")
def e2e_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory, e2e_llm: FakeLLM) -> Iterator[System]:
    data_dir = tmp_path_factory.mktemp("engram-reminders")
    schedule = data_dir.parent / "fast-schedules.toml"
    schedule.write_text(FAST_SCHEDULE)
    with running_system(data_dir, OPENAI_BASE_URL=e2e_llm.url, ENGRAM_LOCAL_LLM="false",
                        ENGRAM_SCHEDULES_FILE=str(schedule), ENGRAM_API_TOKENS=f"{ALICE}:alice,{BOB}:bob",
                        ENGRAM_SSE_KEEPALIVE_S="1") as engram:  # headers and keepalives come at once
        yield engram


class EventsListener:
    """Keeps GET /events of one user open in a thread and collects its frames."""

    def __init__(self, system: System, token: str) -> None:
        self.frames: list[Frame] = []
        self.ready = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._listen, args=(system, token), daemon=True)
        self._thread.start()
        assert self.ready.wait(60), "GET /events did not open"

    def _listen(self, system: System, token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=httpx.Timeout(10, read=30)) as client, client.stream(
                "GET", system.base_url + "/events", headers=headers) as response:
            assert response.status_code == 200
            self.ready.set()
            buffer = ""
            try:
                for chunk in response.iter_text():
                    buffer += chunk
                    while "\n\n" in buffer:
                        block, buffer = buffer.split("\n\n", 1)
                        self.frames.extend(f for f in parse_frames([block + "\n\n"]) if not f.comment)
                    if self._stop:
                        return
            except httpx.ReadTimeout:
                return

    def reminders(self) -> list[Frame]:
        return [frame for frame in self.frames if frame.event == "reminder"]

    def wait_for(self, count: int, timeout_s: float) -> list[Frame]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and len(self.reminders()) < count:
            time.sleep(0.2)
        return self.reminders()

    def close(self) -> None:
        self._stop = True


def create(system: System, token: str, body: dict) -> dict:  # type: ignore[type-arg]
    response = httpx.post(system.base_url + "/reminders", json=body, headers={"Authorization": f"Bearer {token}"},
                          timeout=10)
    assert response.status_code == 201, response.text
    return response.json()


def in_seconds(seconds: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def test_a_reminder_arrives_once_on_its_owners_stream_only(system: System) -> None:
    alice, bob = EventsListener(system, ALICE), EventsListener(system, BOB)
    try:
        reminder = create(system, ALICE, {"text": "stretch your legs", "due_at": in_seconds(3)})
        arrived = alice.wait_for(1, timeout_s=45)
        assert [frame.data["id"] for frame in arrived] == [reminder["id"]]
        assert arrived[0].data["text"] == "stretch your legs" and arrived[0].data["kind"] == "reminder"
        time.sleep(4)  # several more scheduler ticks: still once, and nothing for bob
        assert len(alice.reminders()) == 1
        assert bob.reminders() == []
    finally:
        alice.close()
        bob.close()
    stored = httpx.get(f"{system.base_url}/reminders/{reminder['id']}", headers={"Authorization": f"Bearer {ALICE}"},
                       timeout=10).json()
    assert stored["status"] == "done" and stored["fire_count"] == 1


def test_a_recurring_reminder_fires_again_at_its_next_occurrence(system: System) -> None:
    alice = EventsListener(system, ALICE)
    try:
        reminder = create(system, ALICE, {"text": "drink water", "due_at": in_seconds(2),
                                          "recurrence": "CRON:* * * * *"})
        # The first fire at the due time, the next at the following minute boundary.
        frames = [f for f in alice.wait_for(3, timeout_s=80) if f.data["id"] == reminder["id"]]
        assert len(frames) >= 2
        first, second = (dt.datetime.fromisoformat(f.data["due_at"].replace("Z", "+00:00")) for f in frames[:2])
        assert second > first and second.second == 0
    finally:
        alice.close()


def test_engram_services_shows_the_reminders_service_running(system: System) -> None:
    env = {**os.environ, "ENGRAM_DATA_DIR": str(system.data_dir), "ENGRAM_SCHEDULES_FILE": str(
        Path(system.data_dir).parent / "fast-schedules.toml")}
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_URL", None)
    result = subprocess.run([sys.executable, str(ROOT / "consumer.py"), "services", "--json"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    assert row["name"] == "reminders" and row["last_outcome"] in ("ran", "skipped")
    assert row["last_run_at"] is not None and row["next_run_at"] is not None
