"""Process supervisor: start each role as a child, restart crashed or hung ones, stop cleanly.

A crashed child is restarted with exponential backoff (reset once it has stayed up a
while). A hung child — its heartbeat in Redis older than ``hung_after_s`` — is killed and
replaced. The embedded Redis and PostgreSQL (when ``engram run`` started them) are watched
too: one that died is started again on the same port with its data (Valkey's AOF, PostgreSQL's
WAL), and the roles reconnect by themselves. On SIGTERM/SIGINT every child gets SIGTERM, then
SIGKILL after a grace period.
Children also get SIGTERM from the kernel if the supervisor itself dies (PR_SET_PDEATHSIG),
so even a ``kill -9`` of the supervisor leaves no orphans behind.
"""

from __future__ import annotations

import ctypes
import logging
import os
import resource
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import psutil
import redis

from services.llm.health import record_exit
from services.queues import lapse_held

logger = logging.getLogger(__name__)

HEARTBEAT_KEY = "engram:heartbeat:%s"  # per process: "<host>:<pid>" → unix time of its last beat
HEARTBEAT_TTL_S = 24 * 3600
MAX_BACKOFF_S = 30.0
STABLE_AFTER_S = 60.0
SERVER_CHECK_S = 0.5  # how often the embedded servers' processes are looked at (a pid check, no I/O)
REAP_EVERY_S = 10.0
SERVER_RETRY_S = 0.5  # first pause after a failed server restart; doubles up to MAX_BACKOFF_S


def process_key(pid: int | None = None) -> str:
    """``<host>:<pid>``: names a process across the hosts that share one Redis."""
    return f"{socket.gethostname()}:{pid or os.getpid()}"


BEAT_EVERY_S = 1.0  # the hang check waits minutes (hung_after_s): one beat a second is plenty


class _LastBeat:
    at = float("-inf")  # monotonic time of this process's last beat


def beat(connection: redis.Redis) -> None:
    """Called by a role's main loop: tells the supervisor this process is making progress.

    At most once a second: a digest worker passes here several times per chat, and each beat
    is a Redis round trip on the hot path.
    """
    now = time.monotonic()
    if now - _LastBeat.at < BEAT_EVERY_S:
        return
    connection.set(HEARTBEAT_KEY % process_key(), time.time(), ex=HEARTBEAT_TTL_S)
    _LastBeat.at = now


@dataclass
class Role:
    name: str
    argv: list[str]
    env: Mapping[str, str]
    heartbeat: bool = True  # does this role write engram:heartbeat:<host>:<pid>?
    nice: int = 0  # CPU niceness added in the child: housekeeping yields the cores to chat turns


@dataclass
class Child:
    role: Role
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff_s: float = 1.0
    restart_at: float | None = None
    exit_codes: list[int] = field(default_factory=list)


class WatchedServer(Protocol):
    """What the supervisor needs of an embedded server (``services.embedded.lifecycle.EmbeddedServer``)."""

    name: str

    @property
    def pid(self) -> int | None: ...

    def restart(self) -> bool: ...


@dataclass
class ServerWatch:
    server: WatchedServer
    next_check_at: float = 0.0
    backoff_s: float = SERVER_RETRY_S
    restarts: int = 0


OPEN_FILES_WANTED = 65536


def raise_open_files_limit() -> int:
    """Raise this process's soft open-files limit towards ``OPEN_FILES_WANTED`` (never past the hard limit);
    returns it.

    Children inherit it. Many machines start processes at a soft limit of 1,024, and a web process
    holds one descriptor per open stream besides its pools: at 1,024 its thousandth stream is refused.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(OPEN_FILES_WANTED, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def _die_with_parent() -> None:
    """Runs in the child before exec: ask the kernel for SIGTERM when the supervisor dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def _child_setup(nice: int) -> Callable[[], None]:
    def setup() -> None:
        _die_with_parent()
        if nice:
            os.nice(nice)

    return setup


def adopt_orphans() -> None:
    """Become the reaper of this process's orphaned descendants (``PR_SET_CHILD_SUBREAPER``).

    Call before starting the embedded servers: they daemonize, so they become the supervisor's
    children, and a killed one can be reaped at once. Left to an init that reaps slowly, a dead
    postmaster stays a zombie for seconds, and PostgreSQL refuses to start while the pid in its
    lock file exists ("another server might be running").
    """
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(36, 1)  # 36 = PR_SET_CHILD_SUBREAPER


def reap_orphans(roles: set[int]) -> None:
    """Collect exited adopted processes (servers, their orphaned workers); never a role's, which subprocess reaps."""
    for child in psutil.Process().children():
        if child.pid in roles:
            continue
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError):
            pass


class Supervisor:
    def __init__(
        self,
        roles: list[Role],
        *,
        redis_client: redis.Redis | None,
        hung_after_s: float,
        grace_s: float = 5.0,
        servers: Sequence[WatchedServer] = (),
    ) -> None:
        self.children = {role.name: Child(role) for role in roles}
        self.servers = [ServerWatch(server) for server in servers]
        self._next_reap_at = 0.0
        self.redis = redis_client
        self.hung_after_s = hung_after_s
        self.grace_s = grace_s
        self.stopping = False

    def start(self) -> None:
        for child in self.children.values():
            self._spawn(child)

    def run(self, after_start: Callable[[Supervisor], bool] | None = None) -> int:
        """Supervise until asked to stop; returns the exit code for the supervisor.

        Args:
            after_start: called once every child is started; False stops everything (exit code 2),
                e.g. when the local LLM cannot answer a test completion.
        """
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        self.start()
        if after_start is not None and not self.stopping and not after_start(self):
            self.stop_all()
            return 2
        while not self.stopping:
            self.check()
            time.sleep(0.25)
        self.stop_all()
        return 0

    def check(self) -> None:
        """One supervision pass: restart dead servers, exited children when due, replace hung ones."""
        now = time.monotonic()
        for watch in self.servers:
            self._check_server(watch, now)
        if self.servers and now >= self._next_reap_at:  # a killed server's workers exit after it
            self._next_reap_at = now + REAP_EVERY_S
            reap_orphans(self._role_pids())
        for child in self.children.values():
            if child.process is None:
                if child.restart_at is not None and now >= child.restart_at:
                    self._spawn(child)
                continue
            code = child.process.poll()
            if code is not None:
                self._schedule_restart(child, code, now)
            elif self._is_hung(child, now):
                logger.error("role %s (pid %s) is hung; replacing it", child.role.name, child.process.pid)
                child.process.kill()
                child.process.wait()
                self._schedule_restart(child, -signal.SIGKILL, now)

    def stop_all(self) -> None:
        running = [c.process for c in self.children.values() if c.process is not None and c.process.poll() is None]
        for process in running:
            # Signal each main pid, not the group: `rq worker-pool` hung when the whole group got SIGTERM.
            process.terminate()
        deadline = time.monotonic() + self.grace_s
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                logger.warning("pid %s did not stop in %.0f s; killing it", process.pid, self.grace_s)
                process.kill()
                process.wait()
        logger.info("all roles stopped")

    def _spawn(self, child: Child) -> None:
        child.process = subprocess.Popen(child.role.argv, env=dict(child.role.env),
                                         preexec_fn=_child_setup(child.role.nice))
        child.started_at = time.monotonic()
        child.restart_at = None
        self._clear_heartbeat(child)
        logger.info("started role %s (pid %s)", child.role.name, child.process.pid)

    def _role_pids(self) -> set[int]:
        return {child.process.pid for child in self.children.values() if child.process is not None}

    def _check_server(self, watch: ServerWatch, now: float) -> None:
        if self.stopping or now < watch.next_check_at:
            return
        watch.next_check_at = now + SERVER_CHECK_S
        if watch.server.pid is not None:
            watch.backoff_s = SERVER_RETRY_S
            return
        logger.error("embedded %s is not running; starting it again", watch.server.name)
        reap_orphans(self._role_pids())
        begun = time.monotonic()
        try:
            watch.server.restart()
        except Exception as exc:  # a failed restart is retried with backoff; the supervisor never dies of it
            # (a killed PostgreSQL's last backends may hold its shared memory for a moment)
            logger.warning("could not restart embedded %s (%s); trying again in %.1f s", watch.server.name,
                           str(exc).splitlines()[0] if str(exc) else type(exc).__name__, watch.backoff_s)
            watch.next_check_at = now + watch.backoff_s
            watch.backoff_s = min(MAX_BACKOFF_S, watch.backoff_s * 2)
            return
        watch.restarts += 1
        logger.warning("embedded %s is back after %.2f s (restart %d)", watch.server.name,
                       time.monotonic() - begun, watch.restarts,
                       extra={"server": watch.server.name, "restarts": watch.restarts})

    def _schedule_restart(self, child: Child, code: int, now: float) -> None:
        child.exit_codes.append(code)
        if self.redis is not None:
            try:
                record_exit(self.redis, child.role.name, code)  # /healthz reports recent crashes
                self._lapse_leases(child)
            except redis.RedisError:
                pass
        if now - child.started_at >= STABLE_AFTER_S:
            child.backoff_s = 1.0  # it ran fine for a while: this is a fresh failure
        child.process = None
        child.restarts += 1
        child.restart_at = now + child.backoff_s
        logger.warning(
            "role %s exited with %s; restarting in %.0f s", child.role.name, code, child.backoff_s,
            extra={"role_name": child.role.name, "exit_code": code, "restarts": child.restarts},
        )
        child.backoff_s = min(MAX_BACKOFF_S, child.backoff_s * 2)

    def _lapse_leases(self, child: Child) -> None:
        """The dead child's job and thread leases lapse now: its job goes back to RQ at the janitor's next pass
        and the job's thread is free, instead of each lease waiting out its TTL (10 s, 15 s)."""
        if self.redis is None or child.process is None:
            return
        lapsed = lapse_held(self.redis, process_key(child.process.pid))
        if lapsed:
            logger.warning("role %s (pid %s) died holding %s; lapsed them", child.role.name, child.process.pid,
                           ", ".join(lapsed), extra={"role_name": child.role.name})

    def _is_hung(self, child: Child, now: float) -> bool:
        if not child.role.heartbeat or self.redis is None or child.process is None:
            return False
        if now - child.started_at < self.hung_after_s:
            return False
        try:
            raw = self.redis.get(HEARTBEAT_KEY % process_key(child.process.pid))
        except redis.RedisError:
            return False  # Redis trouble is not the child's hang
        last = float(raw) if raw else 0.0
        return time.time() - last > self.hung_after_s

    def _clear_heartbeat(self, child: Child) -> None:
        if self.redis is not None and child.process is not None:
            try:
                self.redis.delete(HEARTBEAT_KEY % process_key(child.process.pid))
            except redis.RedisError:
                pass

    def _on_signal(self, signum: int, frame: object) -> None:
        logger.info("received %s; stopping", signal.Signals(signum).name)
        self.stopping = True


def child_env(base: Mapping[str, str], **overrides: str) -> dict[str, str]:
    env = dict(base)
    env.update(overrides)
    return env


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
