"""Chaos soak: `engram run` under steady traffic and a seeded, randomised fault schedule, then every invariant.

Starts `engram run` on the embedded default (periodic services on a test schedule of seconds), the
scripted OpenAI-protocol LLM (tests/fake_llm.py) answering with realistic delays (first token ~0.3 s,
then ~25 pieces over ~1 s), and ``--users`` people who each, in a loop: chat in a thread they keep or a
new one, ask what they told it, add an item to a list through ACT, set a reminder or a scheduled prompt
due within minutes. Each keeps `GET /events` open and resumes it with `Last-Event-ID` whenever it drops;
a chat whose stream drops is resumed the same way. Every 20-90 s one fault, sometimes two at once:
`kill -9` of a role (digest, chunker, episodic, background, periodic, scheduler, web), of Valkey or
PostgreSQL; SIGSTOP of a role for longer than its job lease (10 s), then SIGCONT; the LLM slow, 429,
500, or cut mid-stream. The schedule is printed first, so a failing seed can be replayed.

At the end, after the traffic drained, one line per invariant (bench/chaos_checks.py) and the figures:
requests served, faults by kind, the worst time to reply of a chat that overlapped a fault, each role's
RSS drift after warm-up (a process is warm once every kind of work it can be given has run in it: a scheduled
prompt answered, then every periodic service run; bench/chaos_checks.py ``warm_from``). Exit status 1 when an
invariant is violated. With ``--keep DIR`` each process's memory samples are kept in DIR/rss.json.

    python -m bench.chaos [--minutes 60] [--seed 1] [--users 3]

How to read it: the invariant lines are the result (each passes or names what broke; RSS drift passes within
15 % of the warm level); faults by kind and the worst reply during a fault say what the run put Engram through.
A longer run is a stronger claim than a lucky seed: the hour with seed 1 is the one the README quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench.chaos_checks import ROLES, Soak, check_all, sample_rss
from bench.chaos_traffic import Person, listen
from bench.cpu import role_pids
from bench.pipeline import unthrottled_configs, wait_for_roles
from tests.fake_llm import FakeLLM
from tests.llm_steps import Cut, Error, Hang, Json, Reply
from tests.system import running_system

KINDS = ("kill_role", "kill_redis", "kill_postgres", "stop_role", "llm_slow", "llm_429", "llm_500", "llm_cut")
WEIGHTS = (5, 1, 1, 2, 1, 1, 1, 1)
LEASE_S = 10.0
WARM_UP_S = 45.0
RSS_EVERY_S = 5.0
FAST_SCHEDULE = """
[services.reminders]
every_s = 2
queue = "periodic-queue"
job = "services.periodic.reminders.run"

[services.experience]
every_s = 20
queue = "periodic-queue"
job = "services.periodic.experience.run"

[services.thread_expiry]
every_s = 30
queue = "periodic-queue"
job = "services.periodic.expiry.run"
idle_s = 90

[services.drift]
every_s = 45
queue = "background-queue"
job = "services.cognition.drift.run"

[services.vector_backfill]
every_s = 15
queue = "periodic-queue"
job = "services.periodic.backfill.run"
"""
REPLY = ("Here is what I think, in a few sentences: the question is a fair one, the answer depends on "
         "what you want most, and we can look at it again tomorrow if you like.")


@dataclass(frozen=True)
class Fault:
    at_s: float
    kind: str
    target: str = ""
    hold_s: float = 0.0  # SIGSTOP: how long the process stays frozen

    def label(self) -> str:
        held = f" for {self.hold_s:.0f} s" if self.hold_s else ""
        return f"{self.at_s:7.1f} s  {self.kind}{' ' + self.target if self.target else ''}{held}"


def fault_schedule(seed: int, minutes: float) -> list[Fault]:
    """Faults from WARM_UP_S on, every 20-90 s, a fifth of the time two at once; none in the last 30 s."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    at = WARM_UP_S
    end = minutes * 60 - 30
    while True:
        at += rng.uniform(20, 90) if faults else rng.uniform(5, 20)
        if at >= end:
            return faults
        kinds = rng.choices(KINDS, WEIGHTS, k=2 if rng.random() < 0.2 else 1)
        for kind in dict.fromkeys(kinds):  # two different ones
            target = rng.choice(ROLES) if kind in ("kill_role", "stop_role") else ""
            hold = rng.uniform(LEASE_S + 2, LEASE_S + 15) if kind == "stop_role" else 0.0
            faults.append(Fault(round(at, 1), kind, target, round(hold, 1)))


class Injector:
    """Applies faults to the running system and remembers when each was active (for time-to-reply)."""

    def __init__(self, soak: Soak, llm: FakeLLM) -> None:
        self.soak = soak
        self.llm = llm
        self.rng = random.Random(soak.seed + 1)

    def apply(self, fault: Fault) -> None:
        began = time.monotonic()
        until = began + max(fault.hold_s, 20.0)  # a kill counts as "during a fault" for 20 s (the recovery)
        done = True
        if fault.kind == "kill_role" or fault.kind == "stop_role":
            pid = self._role_pid(fault.target)
            if pid is None:
                done = False
            elif fault.kind == "kill_role":
                os.kill(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGSTOP)
                threading.Timer(fault.hold_s, _resume, args=(pid,)).start()
        elif fault.kind == "kill_redis":
            os.kill(int((self.soak.data_dir / "redis" / "valkey.pid").read_text().strip()), signal.SIGKILL)
        elif fault.kind == "kill_postgres":
            lines = (self.soak.data_dir / "postgres" / "postmaster.pid").read_text().splitlines()
            os.kill(int(lines[0]), signal.SIGKILL)
        elif fault.kind == "llm_slow":
            self.llm.script_stream(Hang(8.0))  # eight seconds before the first token, then the answer
        elif fault.kind == "llm_429":
            self.llm.script_stream(Error(429, headers={"Retry-After": "1"}))
        elif fault.kind == "llm_500":
            self.llm.script_stream(Error(500))
        elif fault.kind == "llm_cut":
            self.llm.script_stream(Cut(REPLY, after_chunks=3))
        if fault.kind.startswith("llm_"):
            self.soak.llm_faults.append((began, until + 30))
        self.soak.fault_windows.append((began, until))
        self.soak.faults_done[fault.kind] += int(done)
        print(f"  fault at {time.monotonic() - self.soak.started:7.1f} s: {fault.kind} {fault.target}"
              f"{'' if done else ' (no such process: skipped)'}", flush=True)

    def _role_pid(self, role: str) -> int | None:
        candidates = [pid for name, pid in role_pids(self.soak.engram_pid, ROLES) if name == role]
        return self.rng.choice(candidates) if candidates else None


def _resume(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def script_llm(llm: FakeLLM) -> None:
    """Every call answered as a real endpoint would, slowly enough to matter."""
    llm.route("MEMORY CHUNK", Json({"gists": ["a chat"], "facts": [], "entities": [], "emotion": "neutral",
                                    "salience": 0.3, "open_loops": []}))
    llm.route("EPISODE", Json({"title": "chat", "gist": "a chat", "summary": "a chat", "intent": "", "emotion": "",
                               "outcome": "", "salience": 0.2, "open_loops": []}))
    llm.set_default(Reply(REPLY, chunk_size=8, delay_s=0.3, per_chunk_delay_s=0.04))


def events_ttl_s(minutes: float) -> int:
    """How long the soak's request logs are kept: every chat's log is read again at the end, after the run, the
    drain and the memory workers catching up; the default hour is shorter than an hour's soak."""
    return int(minutes * 60) + 3600


def run(args: argparse.Namespace) -> int:
    faults = fault_schedule(args.seed, args.minutes)
    print(f"chaos soak: {args.minutes} min, seed {args.seed}, {args.users} users, {len(faults)} faults:")
    for fault in faults:
        print("  " + fault.label())
    llm = FakeLLM(record=False).start()
    script_llm(llm)
    people = [f"chaos-token-{n:03d}:person{n}" for n in range(args.users)]
    with tempfile.TemporaryDirectory(prefix="engram-chaos-") as tmp:
        root = Path(args.keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        (root / "schedules.toml").write_text(FAST_SCHEDULE)
        with running_system(root / "data", OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                            ENGRAM_SCHEDULES_FILE=str(root / "schedules.toml"), ENGRAM_API_TOKENS=",".join(people),
                            ENGRAM_LOG_LEVEL="WARNING", ENGRAM_SSE_KEEPALIVE_S="5",
                            ENGRAM_EVENTS_TTL_S=str(events_ttl_s(args.minutes)),
                            ENGRAM_CONFIGS_DIR=str(unthrottled_configs(root / "configs"))) as engram:
            soak = Soak(seed=args.seed, base_url=engram.base_url, data_dir=engram.data_dir,
                        engram_pid=engram.process.pid, urls=engram.urls(),
                        due_within_s=max(20.0, min(90.0, args.minutes * 15)))  # a short run drains sooner
            wait_for_roles(soak.urls[0])  # every role has loaded its models: the schedule starts now
            result = _soak(soak, llm, faults, people, args)
        llm.stop()
        return result


def _soak(soak: Soak, llm: FakeLLM, faults: list[Fault], people: list[str], args: argparse.Namespace) -> int:
    stop = threading.Event()
    persons = [Person(soak, token.split(":")[0], token.split(":")[1], llm, random.Random(args.seed * 100 + n))
               for n, token in enumerate(people)]
    soak.people = persons
    listeners = [threading.Thread(target=listen, args=(soak, p, stop), daemon=True) for p in persons]
    talkers = [threading.Thread(target=p.loop, args=(stop,), daemon=True) for p in persons]
    soak.started = time.monotonic()
    soak.clock_offset = time.time() - soak.started
    for thread in listeners + talkers:
        thread.start()
    injector = Injector(soak, llm)
    pending = list(faults)
    end = soak.started + args.minutes * 60
    next_sample = soak.started
    while time.monotonic() < end:
        now = time.monotonic() - soak.started
        while pending and pending[0].at_s <= now:
            injector.apply(pending.pop(0))
        if time.monotonic() >= next_sample:
            sample_rss(soak)
            next_sample += RSS_EVERY_S
        time.sleep(0.2)
    stop.set()
    print(f"traffic stopped after {args.minutes} min; draining", flush=True)
    for thread in talkers:
        while thread.is_alive():  # the memory levels go on being read while the last chats finish
            thread.join(timeout=RSS_EVERY_S)
            sample_rss(soak)
    # The reminders set near the end are due after it: the streams stay open until they have fired.
    last_due = max((reminder.due_at for reminder in soak.reminders), default=0.0)
    deadline = min(last_due + 20, time.time() + 150)
    while time.time() < deadline:
        time.sleep(RSS_EVERY_S)
        sample_rss(soak)
    soak.listeners_stop.set()
    for thread in listeners:
        thread.join(timeout=30)
    violations = check_all(soak)
    if args.keep:
        samples = {pid: {"role": role, "samples": [[round(at - soak.started, 1), round(mib, 1)] for at, mib in points]}
                   for pid, (role, points) in soak.rss.items()}
        (Path(args.keep) / "rss.json").write_text(json.dumps(samples))
    served = sum(1 for chat in soak.chats if chat.outcome == "message")
    overlapping = [chat for chat in soak.chats if chat.reply_s is not None and soak.during_fault(chat)]
    slowest = max(overlapping, key=lambda chat: chat.reply_s or 0.0, default=None)
    print(f"requests: {len(soak.chats)} accepted, {served} answered with a message, {soak.refused} refused "
          f"(503 or connection refused while a server was down: not accepted)")
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(soak.faults_done.items()))
    print(f"faults injected: {sum(soak.faults_done.values())} ({kinds})")
    if slowest is not None:  # named, so its request can be followed through the log of `engram run`
        print(f"worst time to reply of a chat that overlapped a fault: {slowest.reply_s:.1f} s (request "
              f"{slowest.request_id}, sent at {slowest.started - soak.started:.1f} s, {slowest.reconnects} reconnects)")
    print(f"invariant violations: {violations}")
    return 1 if violations else 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--keep", help="keep the data directory and the log of `engram run` here")
    raise SystemExit(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()

