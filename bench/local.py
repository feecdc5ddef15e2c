"""The embedded default with the local model, as a newcomer meets it: `engram run` with no endpoint.

Runs the issue's 8-turn conversation and a 20-turn scripted one over HTTP, then waits for the
chunker, and prints against the targets: time to first delta (p50 ≤ 2 s, p95 ≤ 5 s), fallbacks (0),
replies with a prompt heading (0), chunker success (≥ 90 %), the list and the reminder stored and
read back, and how the 4k window is spent (tokens of each prompt part, from the server's tokenizer).

    python -m bench.local [--short] [--data-dir DIR] [--chunk-wait-s 900]

Timings depend on what else runs on the cores: on a shared, loaded machine they are pessimistic.

The conversation starts once the housekeeping workers have loaded their models, so it meets them.
One llama.cpp server serves chat and housekeeping alike; a second one for housekeeping was slower in
every run (bench/RESULTS.md, "one llama.cpp server or two") and was removed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis
from rq import Worker
from sqlalchemy import create_engine, text

from bench.pipeline import percentile
from consumer import WORKER_QUEUES
from services.db import sqlalchemy_url
from services.llm.guard import echo_words, is_heading, without_echo
from services.llm.profile import MEMORY_NOTE, CompactBudgets, compact_messages
from services.prompts import PromptLibrary
from services.settings import PROJECT_ROOT
from tests.sse import parse_frames
from tests.system import System, running_system

EIGHT_TURNS = [
    "Hello", "My name is Dana, I live in Lisbon, I have a dog called Pixel",
    "Remind me tomorrow at 9 to call the dentist", "Add milk and eggs to my shopping list",
    "What's on my shopping list?", "What is my dog's name?", "thanks", "Schedule it.",
]
TWENTY_TURNS = [
    "Good morning!", "I work as a nurse at the city hospital", "My sister Ana is visiting next week",
    "Can you suggest something fun to do with her in Lisbon?", "Add bread, butter and jam to my shopping list",
    "What's on my shopping list?", "I don't like coffee, I prefer green tea", "What should I cook tonight?",
    "Remind me on friday at 18:00 to pick up Ana at the airport", "How do I keep a sourdough starter alive?",
    "Pixel chewed my slippers again", "Any tips for training a stubborn dog?", "Add dog treats to my shopping list",
    "What's on my shopping list?", "Tell me a short joke", "I'm a bit tired today", "What is my sister's name?",
    "Write a two-line poem about the sea", "Remind me tomorrow at 7am to go running", "Thanks, that's all for now",
]
TARGETS = {"first_delta_p50_s": 2.0, "first_delta_p95_s": 5.0, "fallbacks": 0, "heading_replies": 0,
           "chunker_success": 0.9}
READ_TIMEOUT_S = 180.0
# Questions of the conversations whose answer it told earlier: the reply must hold the word.
MEMORY_QUESTIONS = {"What is my dog's name?": "pixel", "What is my sister's name?": "ana"}
RSS_SAMPLE_S = 1.0
# /healthz answers once the digest worker is up; the housekeeping workers (nice 10) can take minutes
# more to load their models on a loaded machine, and a conversation run before that never meets them.
WARM_ROLES = ("chunker", "episodic", "background", "periodic")
WARM_TIMEOUT_S = 600.0


@dataclass
class TurnResult:
    text: str
    reply: str
    mode: str
    first_delta_s: float | None
    message_s: float
    fallback: bool
    reason: str


def new_thread(engram: System, headers: dict[str, str]) -> dict[str, str]:
    """A new conversation (``POST /threads``): without it ``POST /chat`` continues the person's current thread."""
    response = httpx.post(engram.base_url + "/threads", headers=headers, timeout=60)
    response.raise_for_status()
    return {"thread_id": response.json()["id"]}


def turn(engram: System, message: str, thread: dict[str, str], headers: dict[str, str] | None = None) -> TurnResult:
    """POST one message and time its stream: first delta, final message (``headers``: e.g. a user's token)."""
    started = time.monotonic()
    first: float | None = None
    body = ""
    with httpx.Client(timeout=httpx.Timeout(30, read=READ_TIMEOUT_S)) as client, client.stream(
            "POST", engram.base_url + "/chat", json={"text": message, **thread}, headers=headers) as response:
        response.raise_for_status()
        thread["thread_id"] = response.headers["X-Thread-ID"]
        for chunk in response.iter_text():
            if first is None and "event: delta" in chunk:
                first = time.monotonic() - started
            body += chunk
            if "event: done" in body:
                break
    frames = [frame for frame in parse_frames([body]) if not frame.comment]
    data = next((frame.data for frame in frames if frame.event == "message"), {}) or {}
    return TurnResult(message, str(data.get("text", "")), str(data.get("mode", "?")), first,
                      time.monotonic() - started, bool(data.get("fallback")), str(data.get("reason", "")))


@dataclass
class ServerMemory:
    """Resident memory of the local llama.cpp server, sampled while the bench runs."""

    data_dir: Path
    peak_mb: float = 0.0
    last_mb: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)

    def _processes(self) -> list[psutil.Process]:
        port_file = self.data_dir / "run" / "llm.port"
        wanted = {port_file.read_text().strip()} if port_file.exists() else set()
        found = []
        for process in psutil.process_iter(["cmdline"]):
            argv = process.info["cmdline"] or []
            if "llama_cpp.server" in argv and "--port" in argv and argv[argv.index("--port") + 1] in wanted:
                found.append(process)
        return found

    def sample(self) -> None:
        total = 0.0
        for process in self._processes():
            try:
                total += process.memory_info().rss / 2**20
            except psutil.Error:
                continue  # restarted between listing and reading: the next sample sees the new one
        self.last_mb, self.peak_mb = total, max(self.peak_mb, total)

    def run(self) -> None:
        while not self._stop.wait(RSS_SAMPLE_S):
            self.sample()

    def stop(self) -> None:
        self._stop.set()


def wait_for_workers(engram: System) -> float:
    """Seconds until every housekeeping worker has loaded its models (it registers with RQ only then)."""
    wanted = {WORKER_QUEUES[role] for role in WARM_ROLES}
    started = time.monotonic()
    client = redis.Redis.from_url(engram.urls()[0])
    try:
        while time.monotonic() - started < WARM_TIMEOUT_S:
            listening = {name for worker in Worker.all(connection=client) for name in worker.queue_names()}
            if wanted <= listening:
                break
            time.sleep(1)
    finally:
        client.close()
    return time.monotonic() - started


def wait_for_chunks(engine: Any, total: int, wait_s: float) -> tuple[int, int]:
    """(ok, failed) chunk rows once every exchange has one, or when ``wait_s`` is up."""
    deadline = time.monotonic() + wait_s
    while True:
        with engine.connect() as connection:
            rows = dict(connection.execute(text("SELECT status, count(*) FROM memory_chunks GROUP BY status")).all())
        ok, failed = int(rows.get("ok", 0)), int(rows.get("failed", 0))
        if ok + failed >= total or time.monotonic() > deadline:
            return ok, failed
        time.sleep(5)


def stored_state(engine: Any) -> tuple[dict[str, list[str]], list[tuple[str, str]], int]:
    """Lists with their items, active reminders (text, local due), facts stored."""
    with engine.connect() as connection:
        items = connection.execute(text("SELECT l.name, i.text FROM list_items i JOIN lists l ON l.id = i.list_id "
                                        "ORDER BY i.position")).all()
        reminders = connection.execute(text("SELECT text, to_char(due_at AT TIME ZONE timezone, 'Dy HH24:MI') "
                                            "FROM scheduled_items WHERE status = 'active' ORDER BY due_at")).all()
        facts = connection.execute(text("SELECT count(*) FROM facts")).scalar_one()
    lists: dict[str, list[str]] = {}
    for name, item in items:
        lists.setdefault(name, []).append(item)
    return lists, [(row[0], row[1]) for row in reminders], int(facts)


def window_parts(engram: System, conversation: list[TurnResult]) -> dict[str, int]:
    """Tokens of each part of a compact prompt at the end of the conversation (the server's tokenizer)."""
    port = int((engram.data_dir / "run" / "llm.port").read_text())
    budgets = CompactBudgets()
    system = PromptLibrary(PROJECT_ROOT / "prompts").render("compact/respond")
    memory = [{"user": result.text, "reply": result.reply} for result in conversation]
    history = compact_messages("", memory, "", "", budgets)[1:-1]
    note = MEMORY_NOTE.format(memory="x " * (budgets.memory_tokens * 2))

    def tokens(text_: str) -> int:
        try:
            response = httpx.post(f"http://127.0.0.1:{port}/extras/tokenize", json={"input": text_}, timeout=30)
            return len(response.json()["tokens"])
        except (httpx.HTTPError, KeyError, ValueError):
            return (len(text_) + 3) // 4
    return {"system": tokens(system), "history": tokens("\n".join(m["content"] for m in history)) + 5 * len(history),
            "memory_max": tokens(note)}


def report(results: list[TurnResult], chunks: tuple[int, int], state: Any, parts: dict[str, int],
           prompt_tokens: list[int], run: dict[str, Any]) -> None:
    firsts = [r.first_delta_s if r.first_delta_s is not None else r.message_s for r in results]
    p50, p95 = percentile(firsts, 0.5), percentile(firsts, 0.95)
    fallbacks = [r for r in results if r.fallback]
    headings = [r for r in results if any(is_heading(line) for line in r.reply.splitlines())]
    ok, failed = chunks
    success = ok / max(1, ok + failed)
    lists, reminders, facts = state
    print("\nturn  first-delta  message  mode         reply")
    for index, r in enumerate(results, 1):
        first = f"{r.first_delta_s:6.2f}s" if r.first_delta_s is not None else "   -   "
        flag = " FALLBACK " + r.reason if r.fallback else ""
        print(f"{index:>4}  {first}  {r.message_s:6.2f}s  {r.mode:<11}  {r.text[:40]!r} -> {r.reply[:70]!r}{flag}")
    print("\nresults against the targets (machine load makes timings pessimistic)")
    print(f"  time to first delta  p50 {p50:.2f} s (≤ {TARGETS['first_delta_p50_s']})   "
          f"p95 {p95:.2f} s (≤ {TARGETS['first_delta_p95_s']})")
    print(f"  fallbacks            {len(fallbacks)} (target 0)")
    print(f"  replies w/ heading   {len(headings)} (target 0)")
    print(f"  chunker success      {ok}/{ok + failed} = {success:.0%} (≥ 90%), facts stored: {facts}")
    print(f"  lists stored         {lists}")
    print(f"  reminders stored     {reminders}")
    for question, expected in MEMORY_QUESTIONS.items():
        answers = [r.reply for r in results if r.text == question]
        print(f"  {question:<27}  right {all(expected in a.lower() for a in answers)}: {answers[:1]}")
    echoes = [r for r in results if without_echo(r.reply, echo_words(r.text)) in (None, "")]
    print(f"  echoed messages      {len(echoes)} (target 0)")
    read_back = [r.reply for r in results if r.text == "What's on my shopping list?"]
    print(f"  list read back       {all('milk' in reply.lower() for reply in read_back[:1])}: {read_back[:1]}")
    print(f"  llama.cpp server     RSS peak {run['memory'].peak_mb:.0f} MB, "
          f"at the end {run['memory'].last_mb:.0f} MB")
    print(f"  wall time            {run['turns_s']:.0f} s for the turns + {run['chunker_s']:.0f} s until the chunker "
          f"was done = {run['turns_s'] + run['chunker_s']:.0f} s; load average at the end {run['load']}")
    print(f"  4k window            system {parts['system']} + history ≤ {parts['history']} (at the end) + memory ≤ "
          f"{parts['memory_max']} tokens; prompt tokens per turn p50 {percentile(prompt_tokens, 0.5):.0f}, "
          f"max {max(prompt_tokens, default=0)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--chunk-wait-s", type=float, default=900.0)
    parser.add_argument("--short", action="store_true", help="only the issue's 8 turns, not the 20 after them")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="engram-bench-local-")) / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for key in [key for key in os.environ if key.startswith("OPENAI_")]:
        del os.environ[key]  # the point is the embedded default
    conversation = EIGHT_TURNS if args.short else EIGHT_TURNS + TWENTY_TURNS
    memory = ServerMemory(data_dir)
    load_before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    with running_system(data_dir) as engram:
        threading.Thread(target=memory.run, daemon=True).start()
        warm_s = wait_for_workers(engram)
        print(f"housekeeping workers ready {warm_s:.0f} s after /healthz; starting the conversation", flush=True)
        started = time.monotonic()
        thread: dict[str, str] = {}
        results = [turn(engram, message, thread) for message in conversation]
        turns_s = time.monotonic() - started
        engine = create_engine(sqlalchemy_url(engram.urls()[1]))
        try:
            with engine.connect() as connection:
                total = connection.execute(text("SELECT count(*) FROM exchanges")).scalar_one()
                prompt_tokens = list(connection.execute(text("SELECT prompt_tokens FROM exchanges")).scalars())
            print(f"{total} exchanges stored; waiting up to {args.chunk_wait_s:.0f} s for the chunker ...", flush=True)
            chunks = wait_for_chunks(engine, int(total), args.chunk_wait_s)
            chunker_s = time.monotonic() - started - turns_s
            state = stored_state(engine)
        finally:
            engine.dispose()
        memory.sample()
        memory.stop()
        load = " ".join(f"{value:.1f}" for value in os.getloadavg())
        run = {"memory": memory, "turns_s": turns_s, "chunker_s": chunker_s,
               "load": f"{load} (before the start {load_before})"}
        report(results, chunks, state, window_parts(engram, results), prompt_tokens, run)

if __name__ == "__main__":
    main()
