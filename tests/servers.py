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
import importlib.util
import time
from collections.abc import Callable
from pathlib import Path

from services.embedded.lifecycle import free_port
from services.embedded.postgres import EmbeddedPostgres
from services.embedded.valkey import EmbeddedRedis
from services.llm.local import LLM_SERVER_MODULES
from services.llm.model_files import installed, local_model
from services.settings import Settings


def start_postgres(tmp_path: Path) -> EmbeddedPostgres:
    """Start PostgreSQL + pgvector with its data under ``tmp_path``; ``.url`` to connect."""
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


def local_llm_available() -> bool:
    """True when llama-cpp-python's server and the chosen local model (or all its parts) are installed: the tests
    that run the local LLM are skipped otherwise."""
    settings = Settings.from_env()
    modules = all(importlib.util.find_spec(name) is not None for name in LLM_SERVER_MODULES)
    return modules and installed(local_model(settings.local_model), settings.model_files_dir)


def wait_until(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` every 50 ms until it is truthy (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
