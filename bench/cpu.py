"""Where the machine's CPU goes: per-process CPU time of a process tree, grouped by role.

Linux only (reads /proc). ``CpuSampler.snapshot()`` before and after a measured phase; the
difference, divided by the replies of that phase, says what each role spends per reply. The
tree is every descendant of the benchmark process: `engram run` (its roles and the embedded
PostgreSQL and Valkey, which daemonize into the supervisor), extra workers, and the benchmark
itself (HTTP clients and the scripted LLM, in threads of this process).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import psutil

TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# First matching fragment of the command line names the role (order matters: postgres before the rest).
ROLES = (
    ("postgres", "postgres"),
    ("valkey", "valkey"),
    ("redis-server", "valkey"),
    ("gunicorn", "web"),
    ("prompt-queue", "digest"),
    ("memory-chunker-queue", "chunker"),
    ("episodic-memory-queue", "episodic"),
    ("background-queue", "background"),
    ("periodic-queue", "periodic"),
    ("workers.scheduler", "scheduler"),
    ("consumer.py", "supervisor"),
    ("llama", "local llm"),
)


@dataclass(frozen=True)
class Usage:
    """CPU seconds by role, and of the whole machine (all cores) over the same time."""

    by_role: dict[str, float]
    machine_busy_s: float
    wall_s: float


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and of its reaped children)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    # After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
    # Reaped children count too: a PostgreSQL backend that exits between two snapshots lands in
    # its postmaster's cutime.
    ticks = sum(int(value) for value in fields[11:15])
    return int(fields[1]), ticks / TICKS_PER_S


def role_of(pid: int, own_pid: int | None = None) -> str:
    if pid == own_pid:
        return "bench clients + scripted LLM"
    cmdline = _cmdline(pid)
    return next((role for fragment, role in ROLES if fragment in cmdline), "other")


def role_pids(engram_pid: int, roles: Collection[str]) -> list[tuple[str, int]]:
    """(role, pid) of each process of ``roles`` that `engram run` supervises (the web role: gunicorn's master)."""
    found = []
    for child in psutil.Process(engram_pid).children():
        role = role_of(child.pid)
        if role in roles:
            found.append((role, child.pid))
    return found


def _machine_busy_s() -> float:
    """Busy CPU seconds of the whole machine since boot (every process, every engineer)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / TICKS_PER_S


class CpuSampler:
    """Snapshots of the CPU time of this process's tree, by role."""

    def __init__(self) -> None:
        self.own_pid = os.getpid()

    def _tree(self) -> dict[int, float]:
        parents, seconds = {}, {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                stat = _stat(int(entry))
                if stat is not None:
                    parents[int(entry)], seconds[int(entry)] = stat
        tree, frontier = {self.own_pid}, [self.own_pid]
        children: dict[int, list[int]] = defaultdict(list)
        for pid, parent in parents.items():
            children[parent].append(pid)
        while frontier:
            for child in children.get(frontier.pop(), []):
                if child not in tree:
                    tree.add(child)
                    frontier.append(child)
        return {pid: seconds[pid] for pid in tree if pid in seconds}

    def snapshot(self) -> tuple[dict[int, float], float, float]:
        import time

        return self._tree(), _machine_busy_s(), time.monotonic()

    def usage(self, before: tuple[dict[int, float], float, float],
              after: tuple[dict[int, float], float, float]) -> Usage:
        """CPU seconds spent by each role between two snapshots (processes started in between count in full)."""
        by_role: dict[str, float] = defaultdict(float)
        for pid, seconds in after[0].items():
            by_role[role_of(pid, self.own_pid)] += seconds - before[0].get(pid, 0.0)
        return Usage(dict(by_role), after[1] - before[1], after[2] - before[2])


def print_usage(usage: Usage, replies: int) -> None:
    """CPU ms per reply by role, the total, and the rest of the machine (other users) over the same time."""
    cores = os.cpu_count() or 1
    ours = sum(usage.by_role.values())
    print(f"  CPU per reply (ms), {replies} replies in {usage.wall_s:.1f} s on {cores} cores:")
    for role, seconds in sorted(usage.by_role.items(), key=lambda item: -item[1]):
        if seconds >= 0.0005 * max(1, replies):
            print(f"    {role:<30} {seconds * 1000 / max(1, replies):7.1f}")
    print(f"    {'= Engram + bench':<30} {ours * 1000 / max(1, replies):7.1f}"
          f"   (budget for 50 replies/s on {cores} cores: {cores * 1000 / 50:.0f})")
    others = max(0.0, usage.machine_busy_s - ours)
    print(f"    other processes on the machine: {others / usage.wall_s * 100:.0f} % of one core on average"
          f" (idle: {max(0.0, cores * usage.wall_s - usage.machine_busy_s) / usage.wall_s * 100:.0f} %)")
