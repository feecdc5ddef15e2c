"""Pipeline overhead: POST /chat → first `status` and → `message`, with an instant scripted LLM.

Starts `engram run` on the embedded default in a temporary data dir (like a newcomer would),
waits until /healthz is green, then sends N chats one after another and N more from a few
concurrent clients. The LLM answers instantly, so the numbers are Engram's own overhead:
HTTP, Redis queueing, the digest steps (embedding, topic, routing, storage) and SSE delivery.

    python -m bench.pipeline [--requests 100] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from services.embedded_base import free_port
from tests.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [
    "What is a good way to learn Portuguese?",
    "Tell me about the history of Lisbon.",
    "thanks!",
    "How do tides work?",
    "Schedule it.",
]


def one_chat(client: httpx.Client, base_url: str, text: str) -> tuple[float, float, float]:
    """Seconds from POST to the first status event, the first reply text (delta) and the message event."""
    started = time.perf_counter()
    first = delta = message = float("nan")
    with client.stream("POST", base_url + "/chat", json={"text": text}) as response:
        for line in response.iter_lines():
            now = time.perf_counter() - started
            if line.startswith("event: status") and first != first:
                first = now
            elif line.startswith("event: delta") and delta != delta:
                delta = now
            elif line.startswith("event: message"):
                message = now
            elif line.startswith("event: done"):
                break
    return first, delta, message


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def report(label: str, samples: list[tuple[float, float, float]]) -> None:
    print(f"{label}: n={len(samples)}")
    for index, name in enumerate(("first status", "first delta", "message")):
        values = [s[index] * 1000 for s in samples if s[index] == s[index]]
        if values:
            print(f"  POST → {name:<13} p50 {percentile(values, 0.5):7.1f} ms   p99 {percentile(values, 0.99):7.1f} ms"
                  f"   mean {statistics.fmean(values):7.1f} ms   (n={len(values)})")


def start_system(data_dir: Path, port: int, llm_url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ENGRAM_DATA_DIR": str(data_dir), "ENGRAM_PORT": str(port), "OPENAI_BASE_URL": llm_url,
           "ENGRAM_LOCAL_LLM": "false", "ENGRAM_LOG_LEVEL": "WARNING", "ENGRAM_DIGEST_WORKERS": "1"}
    for name in ("REDIS_URL", "DATABASE_URL"):
        env.pop(name, None)
    log = open(data_dir.parent / "engram.log", "wb")  # noqa: SIM115 - lives as long as the process
    return subprocess.Popen([sys.executable, str(ROOT / "consumer.py")], env=env, stdout=log, stderr=log)


def wait_healthy(base_url: str, process: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("engram run exited early; see engram.log in the temp dir")
        try:
            if httpx.get(base_url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("engram run did not become healthy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    llm = FakeLLM().start()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        process = start_system(Path(tmp) / "data", port, llm.url)
        try:
            wait_healthy(base_url, process)
            with httpx.Client(timeout=60) as client:  # one keep-alive connection, like a chat client
                for text in MESSAGES:  # warm up caches and connections
                    one_chat(client, base_url, text)
                sequential = [one_chat(client, base_url, MESSAGES[i % len(MESSAGES)]) for i in range(args.requests)]
            report("sequential", sequential)
            with ThreadPoolExecutor(args.concurrency) as pool, httpx.Client(timeout=60) as shared:
                texts = [MESSAGES[i % len(MESSAGES)] for i in range(args.requests)]
                concurrent = list(pool.map(lambda t: one_chat(shared, base_url, t), texts))
            report(f"{args.concurrency} concurrent clients", concurrent)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
            llm.stop()


if __name__ == "__main__":
    main()
