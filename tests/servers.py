"""Throwaway PostgreSQL and Redis servers for tests: a temp dir, free ports, stopped at exit.

Both work as root (CI is root): PostgreSQL then runs as the ``embedded_postgres`` system user
and the temp dir's parents get o+rx, as ``services.embedded.postgres.EmbeddedPostgres`` explains.
Usable from a session-scoped fixture::

    @pytest.fixture(scope="session")
    def postgres(tmp_path_factory):
        server = start_postgres(tmp_path_factory.mktemp("postgres"))
        yield server
        server.stop()
"""

from __future__ import annotations

import atexit
import time
from collections.abc import Callable
from pathlib import Path

from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embedded.valkey import EmbeddedRedis


def start_postgres(tmp_path: Path) -> EmbeddedPostgres:
    """Start PostgreSQL + pgvector with its data under ``tmp_path``; ``.dsn`` / ``.url`` to connect."""
    server = EmbeddedPostgres(tmp_path, port=free_port())
    # Registered before start: a start that fails half-way still leaves nothing running.
    atexit.register(server.stop)
    server.start()
    return server


def start_redis(tmp_path: Path) -> EmbeddedRedis:
    """Start Valkey (persistence on) with its data under ``tmp_path``; ``.url`` to connect."""
    server = EmbeddedRedis(tmp_path, port=free_port())
    atexit.register(server.stop)
    server.start()
    return server


def wait_until(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` every 50 ms until it is truthy (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
