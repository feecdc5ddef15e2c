"""Pipeline overhead: POST /chat → first `status`, first `delta`, `message` (instant scripted LLM); shutdown time.

Starts `engram run` on the embedded default in a temporary data dir (like a newcomer would),
waits until /healthz is green, then sends N chats one after another and N more from a few
concurrent clients. The LLM answers instantly, so the numbers are Engram's own overhead:
HTTP, Redis queueing, the digest steps (embedding, topic, routing, storage) and SSE delivery.

    python -m bench.pipeline [--requests 100] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.fake_llm import FakeLLM
from tests.system import running_system

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


def measure(base_url: str, requests: int, concurrency: int) -> None:
    """Warm up, then print the latencies of ``requests`` sequential and ``requests`` concurrent chats."""
    with httpx.Client(timeout=60) as client:  # one keep-alive connection, like a chat client
        for text in MESSAGES:  # warm up caches and connections
            one_chat(client, base_url, text)
        sequential = [one_chat(client, base_url, MESSAGES[i % len(MESSAGES)]) for i in range(requests)]
    report("sequential", sequential)
    with ThreadPoolExecutor(concurrency) as pool, httpx.Client(timeout=60) as shared:
        texts = [MESSAGES[i % len(MESSAGES)] for i in range(requests)]
        concurrent = list(pool.map(lambda t: one_chat(shared, base_url, t), texts))
    report(f"{concurrency} concurrent clients", concurrent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    llm = FakeLLM().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            with running_system(Path(tmp) / "data", OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                                ENGRAM_LOG_LEVEL="WARNING", ENGRAM_DIGEST_WORKERS="1") as engram:
                measure(engram.base_url, args.requests, args.concurrency)
                stopping = time.perf_counter()  # leaving the block sends SIGTERM and waits for the exit
            print(f"SIGTERM → every role and embedded server stopped: {time.perf_counter() - stopping:.1f} s")
    finally:
        llm.stop()


if __name__ == "__main__":
    main()
