"""Pipeline overhead: POST /chat → first `status`, first `delta`, `message` (instant scripted LLM); shutdown time.

Starts `engram run` on the embedded default in a temporary data dir (like a newcomer would),
waits until /healthz is green, then sends N chats one after another, and then measures
throughput: M chats from 16 concurrent clients (each its own user, so its own thread) with
1, 2 and 4 digest workers (the extra ones started as plain `rq worker` processes, as another
host would). The LLM answers instantly, so the numbers are Engram's own overhead: HTTP, Redis
queueing, the digest steps (embedding, topic, routing, storage) and SSE delivery.

    python -m bench.pipeline [--requests 100] [--throughput-requests 200] [--clients 16] [--workers 1,2,4]

Where the time goes. For each phase the bench prints the CPU every process spent per reply
(bench/cpu.py: /proc utime+stime of web, digest workers, memory roles, PostgreSQL, Valkey, the
scheduler, and this process's clients + scripted LLM), and for the enrichment a burst left behind
(measured until the memory queues are empty). At 50 replies/s on 2 cores everything together has
40 ms of CPU per reply. Each phase has users of its own (a user's recall grows with their history),
three warm-up chats per client, and the warm-up's enrichment waited out. Wall times on a shared box
say little; CPU per reply and the counts of ``python -m bench.commands`` (Redis commands and PostgreSQL
statements per chat, by role) are what compare between runs.

How to read it: compare CPU per reply and the command counts between runs, not wall times on a shared box; the
history of every round is in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import redis
from rq import Queue, Worker

from bench.cpu import CpuSampler, print_usage
from services.queues import ALL_QUEUES, EPISODIC_QUEUE, MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from services.settings import PROJECT_ROOT
from tests.fake_llm import FakeLLM
from tests.system import running_system

WARM_UP_CHATS = 3  # per client before each burst
MESSAGES = [
    "What is a good way to learn Portuguese?",
    "Tell me about the history of Lisbon.",
    "thanks!",
    "How do tides work?",
    "Schedule it.",
]


class ChatClient:
    """One keep-alive HTTP/1.1 connection that speaks just enough HTTP for ``POST /chat`` and its SSE reply.

    The load generator shares the two cores it measures, so it is lean: ``http.client`` and a
    line scan for ``event:`` instead of httpx's stream machinery.
    A request that fails or is refused is recorded without its events (NaN), never dropped.
    """

    def __init__(self, base_url: str, token: str, timeout_s: float = 60) -> None:
        address = urllib.parse.urlsplit(base_url)
        self.connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=timeout_s)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    def chat(self, text: str) -> tuple[float, float, float]:
        """Seconds from POST to the first status event, the first reply text (delta) and the message event."""
        body = json.dumps({"text": text}).encode()
        started = time.perf_counter()
        first = delta = message = float("nan")
        try:
            self.connection.request("POST", "/chat", body, self.headers)
            response = self.connection.getresponse()
            while response.status == 200:
                line = response.readline()
                if not line:
                    break
                if not line.startswith(b"event: "):
                    continue
                now = time.perf_counter() - started
                name = line[7:].strip()
                if name == b"status" and first != first:
                    first = now
                elif name == b"delta" and delta != delta:
                    delta = now
                elif name == b"message":
                    message = now
                elif name == b"done":
                    break
            response.read()  # the rest of the stream, so the connection can carry the next chat
        except (OSError, http.client.HTTPException):
            self.connection.close()  # reopened by the next request
        return first, delta, message


def one_chat(client: ChatClient, text: str) -> tuple[float, float, float]:
    """Seconds from POST to the first status event, the first reply text (delta) and the message event."""
    return client.chat(text)


def percentile(values: list[float], share: float) -> float:
    """The value at ``share`` (0..1) of the sorted values, nearest rank; NaN for none. A share outside 0..1 is an
    error: ``percentile(seconds, 50)`` had printed the maximum as bench.act_planner's p50."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"percentile share must be within 0..1, got {share!r}")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))] if ordered else float("nan")


def report(label: str, samples: list[tuple[float, float, float]]) -> None:
    print(f"{label}: n={len(samples)}")
    for index, name in enumerate(("first status", "first delta", "message")):
        values = [s[index] * 1000 for s in samples if s[index] == s[index]]
        if values:
            print(f"  POST → {name:<13} p50 {percentile(values, 0.5):7.1f} ms   p99 {percentile(values, 0.99):7.1f} ms"
                  f"   mean {statistics.fmean(values):7.1f} ms   (n={len(values)})")


def measure_sequential(base_url: str, token: str, requests: int) -> None:
    """Warm up, then the latencies of ``requests`` chats one after another on one thread."""
    with ChatClient(base_url, token) as client:  # one keep-alive connection, like a chat client
        for text in MESSAGES:  # warm up caches and connections
            one_chat(client, text)
        sampler = CpuSampler()
        before = sampler.snapshot()
        sequential = [one_chat(client, MESSAGES[i % len(MESSAGES)]) for i in range(requests)]
        usage = sampler.usage(before, sampler.snapshot())
    report("sequential", sequential)
    print_usage(usage, len(sequential))


def measure_throughput(base_url: str, redis_url: str, tokens: list[str], requests: int, workers: int) -> float:
    """``requests`` chats from one client per token (each its own user and thread); replies/s."""
    per_client = [requests // len(tokens) + (1 if n < requests % len(tokens) else 0) for n in range(len(tokens))]

    def client_run(n: int) -> list[tuple[float, float, float]]:
        with ChatClient(base_url, tokens[n], timeout_s=120) as client:
            return [one_chat(client, MESSAGES[(n + i) % len(MESSAGES)]) for i in range(per_client[n])]

    def warm_up(n: int) -> None:
        with ChatClient(base_url, tokens[n], timeout_s=120) as client:
            for i in range(WARM_UP_CHATS):
                one_chat(client, MESSAGES[(n + i) % len(MESSAGES)])

    # Not measured: a new worker's first jobs import, compile and cache, and PostgreSQL settles on a
    # statement's generic plan only after its connection ran it ~8 times (long-lived workers are past that).
    with ThreadPoolExecutor(len(tokens)) as pool:
        list(pool.map(warm_up, range(len(tokens))))
    connection = redis.Redis.from_url(redis_url)
    wait_for_enrichment(connection)  # the warm-up's enrichment is not this burst's
    sampler = CpuSampler()
    before = sampler.snapshot()
    started = time.perf_counter()
    with ThreadPoolExecutor(len(tokens)) as pool:
        samples = [sample for batch in pool.map(client_run, range(len(tokens))) for sample in batch]
    elapsed = time.perf_counter() - started
    burst_end = sampler.snapshot()
    answered = sum(1 for sample in samples if sample[2] == sample[2])
    rate = answered / elapsed  # every request was sent and waited for: one not answered counts as time, not reply
    report(f"{len(tokens)} concurrent clients, {workers} digest worker(s): {rate:.1f} replies/s"
           f" ({answered} of {len(samples)} requests answered with `message` in {elapsed:.1f} s)", samples)
    print_usage(sampler.usage(before, burst_end), answered)
    # Enrichment the burst queued (chunks, episodes) runs on after the last reply: it is part of a reply's cost.
    catch_up_s = wait_for_enrichment(connection)
    print(f"  enrichment caught up {catch_up_s:.1f} s after the burst; CPU of that catching-up:")
    print_usage(sampler.usage(burst_end, sampler.snapshot()), answered)
    return rate


def wait_for_roles(redis_url: str, timeout_s: float = 300) -> None:
    """Until every worker role has registered (it loads its models before it does)."""
    connection = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout_s
    while not all(Worker.all(queue=Queue(name, connection=connection)) for name in ALL_QUEUES):
        if time.monotonic() > deadline:
            raise RuntimeError("the worker roles did not all start")
        time.sleep(0.5)


def wait_for_enrichment(connection: redis.Redis, timeout_s: float = 600) -> float:
    """Seconds until the memory queues are empty and no memory job runs."""
    started = time.monotonic()
    queues = [Queue(name, connection=connection) for name in (MEMORY_CHUNKER_QUEUE, EPISODIC_QUEUE)]
    while time.monotonic() - started < timeout_s:
        if all(q.count == 0 and q.started_job_registry.count == 0 for q in queues):
            break
        time.sleep(0.2)
    return time.monotonic() - started


def unthrottled_configs(dest: Path) -> Path:
    """A copy of configs/ whose per-token rate limits do not throttle a benchmark."""
    shutil.copytree(PROJECT_ROOT / "configs", dest)
    (dest / "limits.toml").write_text("[chat]\nper_minute = 1000000\nburst = 1000000\n"
                                      "[memory]\nper_minute = 1000000\nburst = 1000000\n")
    return dest


@contextmanager
def extra_digest_workers(count: int, redis_url: str, database_url: str, llm_url: str, home: Path) -> Iterator[None]:
    """More digest workers, started the way another host would: `rq worker` with the two URLs."""
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url, "OPENAI_BASE_URL": llm_url,
           "ENGRAM_LOCAL_LLM": "false", "ENGRAM_LOG_LEVEL": "WARNING", "ENGRAM_DATA_DIR": str(home)}
    command = [sys.executable, "-m", "rq.cli", "worker", PROMPT_QUEUE, "-u", redis_url,
               "-w", "workers.startup.EngramWorker", "--worker-ttl", "30", "-q"]
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(count)]
    try:
        connection = redis.Redis.from_url(redis_url)
        deadline = time.monotonic() + 300
        while len(Worker.all(queue=Queue(PROMPT_QUEUE, connection=connection))) < count + 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                raise RuntimeError("extra digest workers did not start")
            time.sleep(0.5)
        yield
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--throughput-requests", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", default="1,2,4", help="digest worker counts to measure throughput with")
    args = parser.parse_args()
    counts = sorted({int(n) for n in args.workers.split(",")})
    # Each phase has users of its own: a user's recall and context grow with their history, so phases
    # sharing users would give the later (more workers) phases more work per reply.
    tokens = [[f"bench-pipeline-{phase}-{n:04d}" for n in range(args.clients)] for phase in range(len(counts) + 1)]
    llm = FakeLLM().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            configs = unthrottled_configs(Path(tmp) / "configs")
            with running_system(Path(tmp) / "data", OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                                ENGRAM_LOG_LEVEL="WARNING", ENGRAM_DIGEST_WORKERS="1", ENGRAM_CONFIGS_DIR=str(configs),
                                ENGRAM_API_TOKENS=",".join(f"{t}:u-{t}" for phase in tokens for t in phase)) as engram:
                redis_url, database_url = engram.urls()
                wait_for_roles(redis_url)  # a role still loading its models would count as hot-path CPU
                measure_sequential(engram.base_url, tokens[0][0], args.requests)
                rates = {}
                for phase, count in enumerate(counts, start=1):
                    with extra_digest_workers(count - 1, redis_url, database_url, llm.url, Path(tmp) / f"w{count}"):
                        rates[count] = measure_throughput(engram.base_url, redis_url, tokens[phase],
                                                          args.throughput_requests, count)
                base = rates[counts[0]]
                print("replies/s by digest workers: " + ", ".join(
                    f"{count}: {rate:.1f} (×{rate / base:.2f})" for count, rate in rates.items()))
                stopping = time.perf_counter()  # leaving the block sends SIGTERM and waits for the exit
            print(f"SIGTERM → every role and embedded server stopped: {time.perf_counter() - stopping:.1f} s")
    finally:
        llm.stop()


if __name__ == "__main__":
    main()
