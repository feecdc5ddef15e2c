"""Shared fixtures: fake LLM server, real PostgreSQL + Redis started by the session, app and workers.

Integration tests run against servers this test session starts itself (embedded PostgreSQL
with pgvector, embedded Valkey) on free ports; the schema is built by the Alembic
migrations, so every run exercises them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import redis
from rq import Queue, SimpleWorker
from sqlalchemy import text

from services.db import make_engine
from services.logs import JsonFormatter
from services.migrate import upgrade_head
from services.queues import ALL_QUEUES
from services.settings import Settings
from tests.fake_embedder import HashEmbedder
from tests.fake_llm import FakeLLM

# Fixtures shared by several test modules that live in their own files.
pytest_plugins = ["tests.act_fixtures", "tests.two_users"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

@pytest.fixture(autouse=True)
def _no_json_log_handler_left_behind() -> Iterator[None]:
    """A test that runs a command in-process (``consumer.main``) gets its JSON handler on the root logger, bound to
    the stderr pytest captured for that test: taken off afterwards, or a later log line (an embedded server
    stopped at exit) writes to a closed stream."""
    root = logging.getLogger()
    before, level = set(root.handlers), root.level
    yield
    for handler in root.handlers[:]:
        if handler not in before and isinstance(handler.formatter, JsonFormatter):
            root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llm(fake_llm_server: FakeLLM) -> FakeLLM:
    """The scripted LLM a module's own `engram run` is pointed at (each test resets its script)."""
    return fake_llm_server


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLM) -> FakeLLM:
    """The scripted OpenAI-protocol server, with queue, routes and recorded requests cleared."""
    fake_llm_server.reset()
    return fake_llm_server


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    """Deterministic vectors for pure unit tests (no torch)."""
    return HashEmbedder()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.servers import start_postgres

    server = start_postgres(tmp_path_factory.mktemp("pg"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.servers import start_redis

    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def database_url(pg_server) -> str:  # type: ignore[no-untyped-def]
    """A migrated database (alembic upgrade head), shared by the session."""
    engine = make_engine(pg_server.url)
    upgrade_head(engine)
    engine.dispose()
    return str(pg_server.url)


@pytest.fixture
def db_engine(database_url: str):  # type: ignore[no-untyped-def]
    engine = make_engine(database_url)
    yield engine
    _truncate(engine)
    engine.dispose()


def _truncate(engine) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as connection:
        existing = set(connection.execute(text("SELECT tablename FROM pg_tables WHERE schemaname='public'")).scalars())
        tables = [t for t in existing if t != "alembic_version"]
        if tables:
            connection.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))


@pytest.fixture
def real_redis(redis_server) -> Iterator[redis.Redis]:  # type: ignore[no-untyped-def]
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def settings(tmp_path: Path, database_url: str, redis_server, fake_llm: FakeLLM) -> Settings:  # type: ignore[no-untyped-def]
    """Settings for integration tests: real servers, the fake LLM, short stream timers."""
    base = Settings.from_env({"ENGRAM_DATA_DIR": str(tmp_path / "data")})
    return replace(
        base,
        redis_url=redis_server.url,
        database_url=database_url,
        openai_base_url=fake_llm.url,
        sse_keepalive_s=1.0,
        sse_still_working_s=5.0,
        sse_cap_s=30.0,
        job_timeout_s=60,
        job_retries=1,
    )


@pytest.fixture
def app(settings: Settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    from api import WebDeps, create_app

    deps = WebDeps.build(settings)
    application = create_app(settings, deps)
    application.config["TESTING"] = True
    yield application
    deps.fanout.stop()
    deps.engine.dispose()


@pytest.fixture
def client(app):  # type: ignore[no-untyped-def]
    return app.test_client()


@pytest.fixture
def worker_context(settings: Settings, db_engine, real_redis):  # type: ignore[no-untyped-def]
    """The digest worker's context, installed as this process's, with real models skipped."""
    from services.router.mode_router import ModeRouter
    from services.topics import TopicClassifier, TopicConfig
    from workers.context import build_context
    from workers.process import install_context

    context = build_context(settings)
    # Fast models for the pipeline tests: hashed vectors for topics, the router on its text
    # signals alone (the real MiniLM path is covered by the routing-set and e2e tests).
    context.embedder = HashEmbedder()
    context.router = ModeRouter(settings.configs_dir, None)
    context.topics = TopicClassifier(TopicConfig.load(settings.configs_dir))
    install_context(context)
    yield context
    install_context(None)
    context.close()


@pytest.fixture
def run_jobs(worker_context, real_redis):  # type: ignore[no-untyped-def]
    """Drain every queue with an in-process RQ SimpleWorker (burst mode, main thread)."""

    def drain(queues: tuple[str, ...] = ALL_QUEUES) -> None:
        worker = SimpleWorker([Queue(name, connection=real_redis) for name in queues], connection=real_redis)
        worker.work(burst=True, with_scheduler=False)

    return drain
