"""What the chaos soak records (bench/chaos.py) and the invariants it checks at the end, one line each."""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis
from rq import Queue
from rq.registry import FailedJobRegistry, StartedJobRegistry
from sqlalchemy import create_engine, text

from bench.cpu import role_pids
from services.db import sqlalchemy_url
from services.janitor import LEASE_KEY, LEASE_TTL_S
from services.queues import ALL_QUEUES
from tests.sse import parse_frames

ROLES = ("digest", "chunker", "episodic", "background", "periodic", "scheduler", "web")  # faulted, sampled
RSS_DRIFT_LIMIT = 0.15
# The memory workers catch up on what the traffic left them within this (the drain took ~60 s at load 8 with a
# restarted chunker 140 jobs behind); a worker that stops taking jobs is named when it ends.
DRAIN_CAP_S = 600.0
# A dead worker's job is handed on within its lease's TTL (at once when the supervisor sees the death) and the
# janitor's next pass (every second); the rest is spare for a loaded machine.
RECOVERY_S = LEASE_TTL_S + 50.0
# A process is warm once every kind of work it can be given has run in it (``warm_from``), and not before this
# long after it appeared (its models loaded at start).
RSS_SETTLE_S = 60.0
RSS_WINDOW_S = 30.0  # each level: the median of the samples over this long (one job's peak is not a level)


@dataclass
class Chat:
    request_id: str
    user: str
    token: str
    started: float
    item: str | None = None  # a list item this chat adds through ACT
    frames: list[tuple[str, str, Any]] = field(default_factory=list)  # (id, event, data) as the client got them
    outcome: str | None = None
    reply_s: float | None = None
    message: dict[str, Any] | None = None
    ended: bool = False
    reconnects: int = 0


@dataclass
class Reminder:
    id: int
    user: str
    due_at: float  # unix time


@dataclass
class Soak:
    seed: int
    base_url: str
    data_dir: Path
    engram_pid: int
    urls: tuple[str, str]
    started: float = 0.0
    clock_offset: float = 0.0  # time.time() - time.monotonic(): the database's timestamps on the samples' clock
    due_within_s: float = 90.0  # reminders are set due 10 s to this long ahead
    chats: list[Chat] = field(default_factory=list)
    reminders: list[Reminder] = field(default_factory=list)
    refused: int = 0
    fault_windows: list[tuple[float, float]] = field(default_factory=list)
    llm_faults: list[tuple[float, float]] = field(default_factory=list)
    faults_done: Counter[str] = field(default_factory=Counter)
    # pid → (role, [(monotonic time, MiB)]): every role process, sampled every few seconds
    rss: dict[int, tuple[str, list[tuple[float, float]]]] = field(default_factory=dict)
    people: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    listeners_stop: threading.Event = field(default_factory=threading.Event)

    def during_fault(self, chat: Chat, windows: list[tuple[float, float]] | None = None) -> bool:
        end = chat.started + (chat.reply_s or 0.0)
        return any(start <= end and chat.started <= stop for start, stop in windows or self.fault_windows)


def sample_rss(soak: Soak) -> None:
    """One sample of each role process's resident memory (with its children: gunicorn's workers)."""
    now = time.monotonic()
    for role, pid in role_pids(soak.engram_pid, ROLES):
        try:
            process = psutil.Process(pid)
            mib = sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20
        except psutil.Error:
            continue
        soak.rss.setdefault(pid, (role, []))[1].append((now, mib))


def check_all(soak: Soak) -> int:
    """Print one line per invariant; returns how many violations there were in all."""
    replays = {chat.request_id: _replay(soak, f"/chat/{chat.request_id}/events", chat.token) for chat in soak.chats}
    counts = [
        _line("one outcome per accepted request", _one_outcome(soak, replays)),
        _line("exchange rows = accepted messages", _rows(soak)),
        _line("each due reminder once, to its owner only", _reminders(soak)),
        _line("each confirmed list item stored once", _items(soak)),
        _line("every stream's replay complete and in order", _streams(soak, replays)),
        _line("no job left started or failed without a reason", _jobs(soak)),
        _line(f"RSS drift after warm-up <= {RSS_DRIFT_LIMIT:.0%}", _rss(soak)),
    ]
    return sum(counts)


def _line(name: str, found: tuple[list[str], str]) -> int:
    problems, summary = found
    print(f"{'PASS' if not problems else 'FAIL'} {name}: {summary}" + "".join(f"\n    {p}" for p in problems[:10]))
    return len(problems)


def events_of(response: httpx.Response, until: Callable[[], bool] | None = None) -> Iterator[tuple[str, str, Any]]:
    """(id, event, data) of each logged event a stream sends (keepalives and id-less frames left out).

    ``until``: stop as soon as it is true, checked whenever bytes arrive (keepalives included), so a quiet
    stream is left within one keepalive instead of waiting for an event that may never come.
    """
    buffer = ""
    for piece in response.iter_text():
        if until is not None and until():
            return
        buffer += piece
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            for frame in parse_frames([block + "\n\n"]):
                if not frame.comment and frame.id is not None:
                    yield frame.id, frame.event or "", frame.data


def _replay(soak: Soak, path: str, token: str) -> list[tuple[str, str, Any]]:
    """The whole log of a stream, read again from its start (ends at ``done`` or when nothing comes for 2 s: a
    proactive stream never ends, and its keepalives come every 5 s in the soak)."""
    frames: list[tuple[str, str, Any]] = []
    try:
        with httpx.Client(timeout=httpx.Timeout(10, read=2)) as client, client.stream(
                "GET", soak.base_url + path, headers={"Authorization": f"Bearer {token}"}) as response:
            for frame in events_of(response):
                frames.append(frame)
                if frame[1] == "done":
                    break
    except httpx.ReadTimeout:
        pass
    return frames


def _one_outcome(soak: Soak, replays: dict[str, list[tuple[str, str, Any]]]) -> tuple[list[str], str]:
    problems, fallbacks = [], 0
    for chat in soak.chats:
        ends = [(event, data) for _, event, data in replays[chat.request_id] if event in ("message", "error")]
        if [event for event, _ in ends] != ["message"]:
            problems.append(f"{chat.request_id}: {[event for event, _ in ends]} (client saw {chat.outcome})")
        elif ends[0][1].get("fallback"):
            fallbacks += 1
            if not soak.during_fault(chat, soak.llm_faults):
                problems.append(f"{chat.request_id}: an apology without an LLM fault ({ends[0][1].get('reason')})")
    return problems, f"{len(soak.chats)} accepted, {len(soak.chats) - len(problems)} with exactly one message " \
                     f"({fallbacks} of them the apology after an LLM fault past its retry)"


def _database(soak: Soak, sql: str, **params: Any) -> list[Any]:
    engine = create_engine(sqlalchemy_url(soak.urls[1]))
    try:
        with engine.connect() as db:
            return list(db.execute(text(sql), params).all())
    finally:
        engine.dispose()


def _rows(soak: Soak) -> tuple[list[str], str]:
    ids = [chat.request_id for chat in soak.chats]
    stored = dict(_database(soak, "SELECT request_id, count(*) FROM exchanges WHERE request_id = ANY(:ids) "
                                  "GROUP BY request_id", ids=ids))
    problems = []
    for chat in soak.chats:
        folded = bool(chat.message and chat.message.get("folded_into"))
        want = 1 if chat.outcome == "message" and not folded else 0
        if stored.get(chat.request_id, 0) != want:
            problems.append(f"{chat.request_id}: {stored.get(chat.request_id, 0)} rows, {want} expected")
    return problems, f"{sum(stored.values())} rows for {len(ids)} accepted requests"


def _reminders(soak: Soak) -> tuple[list[str], str]:
    due = [r for r in soak.reminders if r.due_at < time.time() - 15]
    problems = []
    for reminder in due:
        for person in soak.people:
            got = {event_id for event_id, event, data in person.events
                   if event == "reminder" and data.get("id") == reminder.id}
            want = 1 if person.user == reminder.user else 0
            if len(got) != want:
                problems.append(f"reminder {reminder.id} of {reminder.user}: {len(got)} on {person.user}'s stream")
    return problems, f"{len(due)} due of {len(soak.reminders)} set"


def _items(soak: Soak) -> tuple[list[str], str]:
    items = {chat.item: chat for chat in soak.chats if chat.item}
    stored = dict(_database(soak, "SELECT text, count(*) FROM list_items WHERE text = ANY(:items) GROUP BY text",
                            items=list(items)))
    problems, confirmed = [], 0
    for item, chat in items.items():
        done = bool(chat.message and (chat.message.get("metrics") or {}).get("tools", {}).get("list"))
        confirmed += done
        if (done and stored.get(item, 0) != 1) or stored.get(item, 0) > 1:
            problems.append(f"{item}: stored {stored.get(item, 0)} times (confirmed: {done})")
    return problems, f"{confirmed} confirmed of {len(items)} asked"


def _ordered(ids: list[str]) -> bool:
    keys = [tuple(int(part) for part in event_id.split("-")) for event_id in ids]
    return all(a < b for a, b in zip(keys, keys[1:], strict=False))


def _streams(soak: Soak, replays: dict[str, list[tuple[str, str, Any]]]) -> tuple[list[str], str]:
    problems = []
    for chat in soak.chats:
        seen = [event_id for event_id, event, data in chat.frames
                if not (event == "status" and (data or {}).get("stage") == "still_working")]
        logged = [event_id for event_id, _, _ in replays[chat.request_id]]
        if not _ordered(seen) or (chat.ended and seen != logged):
            problems.append(f"chat {chat.request_id}: the client got {len(seen)} events, the log holds {len(logged)}")
    for person in soak.people:
        seen = [event_id for event_id, _, _ in person.events]
        logged = [event_id for event_id, _, _ in _replay(soak, "/events", person.token)]
        if not _ordered(seen) or not set(seen) <= set(logged):
            problems.append(f"/events of {person.user}: {len(seen)} seen live, {len(logged)} in the log, "
                            f"in order: {_ordered(seen)}")
    return problems, f"{len(soak.chats)} chat streams, {len(soak.people)} proactive streams"


def _jobs(soak: Soak) -> tuple[list[str], str]:
    connection = redis.Redis.from_url(soak.urls[0])
    problems, drained = _settle(connection)
    failed = 0
    for name in ALL_QUEUES:
        queue = Queue(name, connection=connection)
        registry = FailedJobRegistry(queue=queue)
        for job in queue.job_class.fetch_many(registry.get_job_ids(), connection=connection):
            failed += 1
            if job is not None and not (job.exc_info or job.meta.get("reason")):
                problems.append(f"{name}: job {job.id} failed without a reason")
    return problems, f"{failed} failed jobs, each with its reason; {drained}"


def _settle(connection: redis.Redis) -> tuple[list[str], str]:
    """Wait until the workers have caught up on what the traffic left them (no job queued) and every run
    listed as started then has ended; returns the runs lost on the way and how the wait ended.

    A run is lost when it stays listed as started without its lease (its worker is dead) for
    ``RECOVERY_S``: the janitor should have handed its job on by then. A run that holds its lease is alive,
    however slowly it goes, and is waited for: the memory workers run at nice 19, which beside CPU-bound work
    at nice 0 (a model bench) is ~1.5 % of a core (CFS weights 15 against 1024), so a job of a fraction of a
    CPU second takes tens of seconds. The periodic services keep firing: runs that start after the queues
    emptied are not waited for. The whole wait ends after ``DRAIN_CAP_S`` at the latest; what is left then is
    named.
    """
    began = time.monotonic()
    leaseless: dict[tuple[str, str], float] = {}  # run -> when it was first seen without its lease
    lost: dict[tuple[str, str], str] = {}  # run -> its job id
    awaited: set[tuple[str, str]] | None = None  # the runs listed when no job was queued any more
    while True:
        now = time.monotonic()
        runs = _runs(connection)
        for run, job_id in runs.items():
            if connection.exists(LEASE_KEY % run[1]):
                leaseless.pop(run, None)
            elif now - leaseless.setdefault(run, now) > RECOVERY_S:
                lost[run] = job_id
        queued = sum(Queue(name, connection=connection).count for name in ALL_QUEUES)
        if awaited is None and not queued:
            awaited = set(runs)
        alive = (awaited or set()) & set(runs) - set(lost)
        if (awaited is not None and not alive) or now - began > DRAIN_CAP_S:
            break
        time.sleep(1)
    problems = [f"{name}: job {job_id} still started without its lease after {RECOVERY_S:.0f} s (its worker died "
                f"and nobody handed it on)" for (name, _), job_id in sorted(lost.items())]
    if awaited is None:
        problems.append(f"{queued} job(s) still queued after {DRAIN_CAP_S:.0f} s: the workers did not catch up")
    problems += [f"{name}: job {runs[(name, member)]} still running (its lease held) after the {DRAIN_CAP_S:.0f} s "
                 f"wait" for name, member in sorted(alive)]
    return problems, f"drained in {time.monotonic() - began:.0f} s"


def _runs(connection: redis.Redis) -> dict[tuple[str, str], str]:
    """(queue, registry entry) -> job id of every run listed as started (one entry per run of a job)."""
    runs = {}
    for name in ALL_QUEUES:
        registry = StartedJobRegistry(name, connection=connection)
        registry.cleanup()  # what RQ itself counts as abandoned (past the entry's timeout) is failed first
        for member in connection.zrange(registry.key, 0, -1):
            text_member = member.decode() if isinstance(member, bytes) else str(member)
            runs[(name, text_member)] = registry.parse_job_id(text_member)
    return runs


def warm_from(runs: list[tuple[str, float, float, str, dict[str, Any]]], born: float) -> float | None:
    """When a process that appeared at ``born`` has done every kind of work once, or None if it never has.

    ``runs``: (service, started, finished, outcome, details) of every periodic run, on the samples' clock. The
    periodic worker starts with no model: its first scheduled prompt loads the embedder (the request graph, for
    the prompt's recall: +145 MiB, once per process). So a process is warm once a scheduled prompt has been
    answered after it appeared, and then every service of the schedule has run after that prompt.
    """
    prompt = next(((started, finished) for service, started, finished, outcome, details in runs
                   if service == "reminders" and started >= born and (details or {}).get("prompts")), None)
    if prompt is None:
        return None
    ends = [prompt[1]]
    for name in sorted({service for service, *_ in runs}):
        after = [finished for service, started, finished, outcome, _ in runs  # the prompt's own run is the reminders'
                 if service == name and started >= prompt[0]]
        if not after:
            return None
        ends.append(after[0])
    return max(born + RSS_SETTLE_S, *ends)


def _service_runs(soak: Soak) -> list[tuple[str, float, float, str, dict[str, Any]]]:
    rows = _database(soak, "SELECT service, started_at, coalesce(finished_at, started_at), outcome, details "
                           "FROM service_runs WHERE outcome <> 'running' ORDER BY started_at")
    return [(service, started.timestamp() - soak.clock_offset, finished.timestamp() - soak.clock_offset, outcome,
             details) for service, started, finished, outcome, details in rows]


def _rss(soak: Soak) -> tuple[list[str], str]:
    """Each process alive at the end and warm long enough before it: its level at the end against its level once
    warm (``warm_from``). Its level when it appeared is shown too, so a one-off load stays visible."""
    problems, shown, young = [], [], 0
    runs = _service_runs(soak)
    last = max((samples[-1][0] for _, samples in soak.rss.values()), default=0.0)
    for pid, (role, samples) in sorted(soak.rss.items(), key=lambda item: item[1][0]):
        born = samples[0][0]
        if samples[-1][0] < last - 10:
            continue  # gone before the end (killed, replaced)
        warm_at = warm_from(runs, born)
        if warm_at is None or warm_at + RSS_WINDOW_S > last - RSS_WINDOW_S:
            young += 1
            continue
        first = [mib for at, mib in samples if at < born + RSS_WINDOW_S]
        warm = [mib for at, mib in samples if warm_at <= at < warm_at + RSS_WINDOW_S]
        end = [mib for at, mib in samples if at >= last - RSS_WINDOW_S]
        if not warm or not end:
            young += 1
            continue
        level, final = statistics.median(warm), statistics.median(end)
        drift = final / level - 1
        shown.append(f"{role} {statistics.median(first):.0f}->{level:.0f} (warm at {warm_at - born:.0f} s)"
                     f"->{final:.0f} MiB {drift:+.0%}")
        if drift > RSS_DRIFT_LIMIT:
            problems.append(f"{role} (pid {pid}): {level:.0f} -> {final:.0f} MiB ({drift:+.0%})")
    note = f"; {young} process(es) not warm long enough before the end to judge (restarted late)" if young else ""
    return problems, (", ".join(shown) or "no process was warm long enough") + note
