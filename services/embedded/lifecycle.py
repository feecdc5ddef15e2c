"""Shared pieces of the embedded servers: ports, a file lock, process checks and the lifecycle base.

Everything a server keeps lives under ``<data_dir>/run``: its remembered port, its fcntl lock,
and the pids (with create times) of the processes attached to it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil

from services.errors import EmbeddedServerError

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0
LOCK_TIMEOUT_S = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """True when a server could bind ``port`` on 127.0.0.1."""
    with socket.socket() as sock:
        # Servers set SO_REUSEADDR too: TIME_WAIT leftovers of a stopped server must not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def remembered_port(path: Path, requested: int | None = None) -> int:
    """``requested`` if given, else the port stored in ``path`` while it is free, else a new one; stored."""
    port = requested
    if port is None:
        with contextlib.suppress(OSError, ValueError):
            stored = int(path.read_text())
            port = stored if port_is_free(stored) else None
    port = port or free_port()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{port}\n")
    return port


def to_libpq_url(url: str) -> str:
    """Drop SQLAlchemy's driver suffix: ``postgresql+psycopg://`` → ``postgresql://`` (for psycopg/psql)."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme.split('+', 1)[0]}{sep}{rest}"


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Exclusive fcntl lock, so two processes starting together don't both initdb or start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(f"timed out waiting for lock {path}") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def running_process(pid: int, names: tuple[str, ...] = ()) -> psutil.Process | None:
    """The process ``pid`` if it runs (zombies count as gone) and, given ``names``, is one of them."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE or (names and process.name() not in names):
            return None
    except psutil.Error:
        return None
    return process


def _process_key(pid: int) -> list[float] | None:
    """(pid, create time) identifies a process even after its pid is reused."""
    process = running_process(pid)
    return [pid, process.create_time()] if process is not None else None


def _alive(entry: dict) -> bool:
    return _process_key(entry["pid"]) == [entry["pid"], entry["created"]]


def wait_gone(pid: int, timeout: float) -> bool:
    """Wait for ``pid`` to exit; True when it did."""
    # Polled rather than psutil's wait(): an exited daemon stays a zombie until init reaps it,
    # which some container inits do only every second or two.
    deadline = time.monotonic() + timeout
    while running_process(pid) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def tail(path: Path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


class EmbeddedServer:
    """Shared lifecycle: a lock and a user list per server, in ``<data_dir>/run``."""

    name = "server"

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.run_dir = self.data_dir / "run"
        self.port = port
        self._requested_port = port

    @property
    def _port_file(self) -> Path:
        return self.run_dir / f"{self.name}.port"

    def start(self) -> bool:
        """Start the server, or adopt one already running on this data dir; True if this call started it."""
        with _file_lock(self.run_dir / f"{self.name}.lock"):
            return self._start_locked()

    def stop(self) -> None:
        """Stop the server of this data dir, whoever started it."""
        with _file_lock(self.run_dir / f"{self.name}.lock"):
            self._stop_locked()

    def restart(self) -> bool:
        """Start it again after it died, on the port it had (clients' URLs name it); True if this call started it."""
        with _file_lock(self.run_dir / f"{self.name}.lock"):
            self._requested_port = self.port or self._requested_port
            return self._start_locked()

    def attach(self) -> tuple[bool, str]:
        """Start or adopt, and register this process as a user; returns (started, token for detach)."""
        with _file_lock(self.run_dir / f"{self.name}.lock"):
            started = self._start_locked()
            token = uuid.uuid4().hex
            me = {"token": token, "pid": os.getpid(), "created": psutil.Process().create_time()}
            users = self._live_users() + [me]
            self._write_users(users)
            return started, token

    def detach(self, token: str) -> bool:
        """Unregister ``token``; stop the server when no other live process uses it. True if stopped."""
        with _file_lock(self.run_dir / f"{self.name}.lock"):
            users = [user for user in self._live_users() if user["token"] != token]
            self._write_users(users)
            if users:
                logger.info("%s still used by pids %s; leaving it running", self.name, [u["pid"] for u in users])
                return False
            self._stop_locked()
            return True

    @property
    def _users_file(self) -> Path:
        return self.run_dir / f"{self.name}.users"

    def _live_users(self) -> list[dict]:
        path = self._users_file
        if not path.exists():
            return []
        try:
            users = json.loads(path.read_text() or "[]")
            return [user for user in users if _alive(user)]
        except (ValueError, TypeError, KeyError) as exc:
            # Written atomically, so this is damage from outside; treating it as empty at worst
            # stops a server another process still uses, which beats refusing every attach.
            logger.warning("ignoring unreadable %s user list %s (%s)", self.name, path, exc)
            return []

    def _write_users(self, users: list[dict]) -> None:
        # Temp file + rename: a kill mid-write must leave the old list, never truncated JSON.
        path = self._users_file
        temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(users))
        os.replace(temp, path)

    def _start_locked(self) -> bool:
        raise NotImplementedError

    def _stop_locked(self) -> None:
        raise NotImplementedError

