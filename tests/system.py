"""Launch `engram run` as a real process for end-to-end tests, and read its SSE streams."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from services.embedded.lifecycle import free_port
from tests.sse import Frame, parse_frames

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT_S = 240


class System:
    def __init__(self, process: subprocess.Popen[bytes], base_url: str, data_dir: Path, log_path: Path) -> None:
        self.process = process
        self.base_url = base_url
        self.data_dir = data_dir
        self.log_path = log_path

    def urls(self) -> tuple[str, str]:
        """Redis and PostgreSQL URLs of the embedded servers `engram run` started."""
        run = self.data_dir / "run"
        redis_port = int((run / "redis.port").read_text())
        pg_port = int((run / "postgres.port").read_text())
        return f"redis://127.0.0.1:{redis_port}/0", f"postgresql://postgres@127.0.0.1:{pg_port}/engram"

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""


@contextmanager
def running_system(data_dir: Path, **env_overrides: str) -> Iterator[System]:
    """`engram run` on the embedded default with its data in ``data_dir``; stopped afterwards."""
    port = free_port()
    env = {
        **os.environ,
        "ENGRAM_DATA_DIR": str(data_dir),
        "ENGRAM_PORT": str(port),
        "ENGRAM_WEB_WORKERS": "1",
        "ENGRAM_LOG_LEVEL": "INFO",
        "HF_HUB_OFFLINE": "1",
        **env_overrides,
    }
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_URL", None)
    log_path = data_dir.parent / f"{data_dir.name}-engram-run.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, str(ROOT / "consumer.py")], cwd=ROOT, env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
    engram = System(process, f"http://127.0.0.1:{port}", data_dir, log_path)
    try:
        _wait_healthy(engram)
        yield engram
    finally:
        _stop(engram)


def _wait_healthy(engram: System) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if engram.process.poll() is not None:
            pytest.fail(f"engram run exited with {engram.process.returncode}:\n{engram.log_tail()}")
        try:
            if httpx.get(engram.base_url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"engram run did not become healthy:\n{engram.log_tail()}")


def _stop(engram: System) -> None:
    if engram.process.poll() is None:
        engram.process.send_signal(signal.SIGTERM)
        try:
            engram.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            engram.process.kill()


class FrameReader:
    """Reads SSE frames from a streamed response, resumable across calls."""

    def __init__(self, response: httpx.Response) -> None:
        self.chunks = response.iter_text()
        self.buffer = ""

    def read(self, stop_after: int | None = None) -> list[Frame]:
        """Frames until `done`, or until `stop_after` frames (to simulate a drop)."""
        frames: list[Frame] = []
        # Frames the last call left in the buffer (one chunk can hold several) come before a new chunk.
        for chunk in itertools.chain([""], self.chunks):
            self.buffer += chunk
            while "\n\n" in self.buffer:
                block, self.buffer = self.buffer.split("\n\n", 1)
                frames.extend(f for f in parse_frames([block + "\n\n"]) if not f.comment)
                if frames and (frames[-1].event == "done" or (stop_after and len(frames) >= stop_after)):
                    return frames
        return frames


def read_stream(response: httpx.Response, stop_after: int | None = None) -> list[Frame]:
    return FrameReader(response).read(stop_after)


@contextmanager
def chat(engram: System, text_: str, *, read_timeout_s: float = 60, **extra: object) -> Iterator[httpx.Response]:
    with httpx.Client(timeout=httpx.Timeout(60, read=read_timeout_s)) as client, client.stream(
        "POST", engram.base_url + "/chat", json={"text": text_, **extra}
    ) as response:
        yield response


