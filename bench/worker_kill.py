"""A digest worker killed mid-reply: how long until the person has the real reply.

Starts `engram run` on the embedded default with the scripted LLM (tests/fake_llm.py); each round
sends a chat whose reply streams for several seconds, `kill -9`s the digest worker running it after
the first delta, and times, from the kill, the retry's first event (`status: retrying`: the job was
found and started again) and the `message`. The retry's reply comes at once, so kill → message is
the recovery itself: the lapse of the dead run's job lease (or the supervisor telling the janitor
its child died), the janitor's pass, RQ's retry delay, the scheduled-job mover, and a free digest
worker (with one worker: the replacement's start-up, models included).

    python -m bench.worker_kill [--rounds 5] [--digest-workers 2]

How to read it: the median kill → message is the recovery an operator can expect (with one digest worker it
includes the replacement's start-up); the max says how far a loaded machine stretches it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import redis
from rq import Queue, Worker

from bench.pipeline import wait_for_roles
from services.queues import PROMPT_QUEUE
from services.supervisor import pid_alive
from tests.fake_llm import FakeLLM
from tests.llm_steps import Json, Reply
from tests.system import FrameReader, System, running_system

SLOW = "This reply will be cut off by a crash. " * 4
ANSWER = "Answered after the crash."


def busy_digest_pid(connection: redis.Redis, request_id: str) -> int:
    """The pid of the live digest worker running the request's job (a killed worker's record stays a while)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for worker in Worker.all(queue=Queue(PROMPT_QUEUE, connection=connection)):
            if worker.get_current_job_id() == f"digest-{request_id}" and worker.pid and pid_alive(worker.pid):
                return int(worker.pid)
        time.sleep(0.02)
    raise RuntimeError("no digest worker took the job")


def one_round(engram: System, llm: FakeLLM, connection: redis.Redis) -> tuple[float, float]:
    """(kill → retrying, kill → message) in seconds."""
    llm.script_stream(Reply(SLOW, chunk_size=3, per_chunk_delay_s=0.2), Reply(ANSWER))
    with httpx.Client(timeout=httpx.Timeout(60, read=180)) as client, client.stream(
            "POST", engram.base_url + "/chat", json={"text": "Please survive a crash."}) as response:
        reader = FrameReader(response)
        frames = reader.read(stop_after=3)  # processing, thinking, the first delta
        if frames[-1].event != "delta":
            raise RuntimeError(f"expected a delta first: {[f.event for f in frames]}")
        os.kill(busy_digest_pid(connection, response.headers["X-Request-ID"]), signal.SIGKILL)
        killed = time.monotonic()
        retrying = message = None
        while message is None:
            batch = reader.read(stop_after=1)
            frames += batch
            if not batch:
                raise RuntimeError(f"the stream ended without a message after {[(f.event, f.data) for f in frames]}")
            for frame in batch:
                if frame.event == "status" and frame.data.get("stage") == "retrying" and retrying is None:
                    retrying = time.monotonic() - killed
                if frame.event in ("message", "error"):
                    if frame.event != "message" or frame.data["text"] != ANSWER:
                        raise RuntimeError(f"not the real reply: {frame.event} {frame.data}")
                    message = time.monotonic() - killed
        reader.read()  # to done
    return retrying if retrying is not None else float("nan"), message


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--digest-workers", type=int, default=None,
                        help="ENGRAM_DIGEST_WORKERS (default: the setting's default)")
    parser.add_argument("--log", type=Path, help="keep the log of `engram run` here")
    args = parser.parse_args(argv)
    llm = FakeLLM().start()
    llm.route("MEMORY CHUNK", Json({"gists": ["a crash"], "facts": [], "entities": [], "emotion": "neutral",
                                    "salience": 0.1, "open_loops": []}))
    env = {"ENGRAM_DIGEST_WORKERS": str(args.digest_workers)} if args.digest_workers else {}
    try:
        with tempfile.TemporaryDirectory() as tmp, running_system(
                Path(tmp) / "data", OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                ENGRAM_LOG_LEVEL="WARNING", **env) as engram:
            redis_url, _ = engram.urls()
            connection = redis.Redis.from_url(redis_url)
            results = []
            for number in range(args.rounds):
                wait_for_roles(redis_url)  # every role up again (the killed worker's replacement included)
                retrying, message = one_round(engram, llm, connection)
                results.append(message)
                print(f"round {number + 1}: kill -> retrying {retrying:.2f} s, kill -> message {message:.2f} s",
                      flush=True)
            if args.log:
                shutil.copy(engram.log_path, args.log)
            print(f"kill -> message: median {statistics.median(results):.2f} s, max {max(results):.2f} s "
                  f"({args.rounds} rounds, digest workers: {args.digest_workers or 'default'})")
    finally:
        llm.stop()


if __name__ == "__main__":
    main()
