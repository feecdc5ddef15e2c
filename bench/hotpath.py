"""Where a chat's time goes: the web's POST /chat and the digest job, profiled in one process.

Starts a throwaway PostgreSQL and Valkey (as the tests do), the instant scripted LLM, the real
Flask app and the real worker context (MiniLM embedder, router exemplars), then runs N chats:
POST through the app's test client, the digest job through an in-process RQ SimpleWorker. It
prints the job's own timing spans (stored with every exchange) and the top functions by
cumulative CPU time under cProfile (a CPU clock: waits do not count) — the profile that
bench/pipeline.py's docstring summarises.

    python -m bench.hotpath [--requests 60] [--top 25] [--clock cpu|wall]

With ``--clock cpu`` (the default) cProfile counts this process's CPU time, so waits on
PostgreSQL, Valkey and the LLM drop out and the shares are what the worker itself burns;
``--scope digest`` profiles only the ``digest()`` call (no RQ). A last, unprofiled round prints
the CPU ms of ``digest()`` (its thread's clock) and of the whole burst-mode RQ run per job, and
what one ``digest()`` sends: SQL statements (by their first words; psycopg's BEGIN and COMMIT
too), Redis round trips, and Redis commands (Valkey's own ``INFO commandstats`` around each call,
so pipelined and Lua-script commands count one by one), and the CPU the throwaway PostgreSQL
(postmaster and every backend) and Valkey spent per job in the unprofiled round (/proc, 10 ms ticks:
use 100 requests or more; background work such as autovacuum counts too). After each job, outside
``digest()``, what the chunker job would complete for a turn stored lean (its lines and vector:
services/memory/vectors.py) is completed, so recall sees the same history as under ``engram run``;
its PostgreSQL work counts in the server CPU per job (as it did inside the store before).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import pstats
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import psycopg
import redis
from rq import Queue, SimpleWorker
from sqlalchemy import event, select

from bench.pipeline import MESSAGES, percentile
from services.db import Exchange, make_engine, make_sessionmaker
from services.migrate import upgrade_head
from services.queues import PROMPT_QUEUE
from services.settings import Settings
from tests.fake_llm import FakeLLM
from tests.servers import start_postgres, start_redis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--save", help="also write the raw cProfile stats to this file")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="what cProfile counts")
    parser.add_argument("--scope", choices=("job", "digest"), default="job",
                        help="profile the whole RQ job (with RQ's bookkeeping) or only the digest() call")
    args = parser.parse_args()
    llm = FakeLLM().start()
    with tempfile.TemporaryDirectory() as tmp:
        pg, valkey = start_postgres(Path(tmp) / "pg"), start_redis(Path(tmp) / "redis")
        try:
            engine = make_engine(pg.url)
            upgrade_head(engine)
            settings = replace(Settings.from_env({"ENGRAM_DATA_DIR": str(Path(tmp) / "data")}),
                               redis_url=valkey.url, database_url=str(pg.url), openai_base_url=llm.url)
            servers = ServerCpu(pg.pgdata / "postmaster.pid", valkey.pid)
            profile(settings, engine, args.requests, args.top, args.save, args.clock, args.scope, servers)
        finally:
            valkey.stop()
            pg.stop()
            llm.stop()


class ServerCpu:
    """CPU seconds of the throwaway PostgreSQL (postmaster and backends) and Valkey, from /proc."""

    def __init__(self, postmaster_pid_file: Path, valkey_pid: int | None) -> None:
        self.postmaster = int(postmaster_pid_file.read_text().split()[0])
        self.valkey = valkey_pid

    def seconds(self) -> dict[str, float]:
        import psutil

        postmaster = psutil.Process(self.postmaster)
        pg = sum(sum(p.cpu_times()[:2]) for p in [postmaster, *postmaster.children()] if p.is_running())
        valkey = sum(psutil.Process(self.valkey).cpu_times()[:2]) if self.valkey else 0.0
        return {"postgres": pg, "valkey": valkey}


def profile(settings: Settings, engine, requests: int, top: int, save: str | None,  # type: ignore[no-untyped-def]
            clock: str = "cpu", scope: str = "job", servers: ServerCpu | None = None) -> None:
    from api import create_app
    from workers.process import context_from_environment, install_context

    connection = redis.Redis.from_url(settings.redis_url or "")
    app = create_app(settings)
    limits = app.extensions.get("engram.limits")
    if limits is not None:  # a benchmark is not abuse (the check stays: only the budget is lifted)
        app.extensions["engram.limits"] = replace(limits, chat=replace(limits.chat, per_minute=10**6, burst=10**6))
    client = app.test_client()
    context = context_from_environment(redis_client=connection, settings=settings)
    install_context(context)
    worker = SimpleWorker([Queue(PROMPT_QUEUE, connection=connection)], connection=connection)
    logging.getLogger("rq").setLevel(logging.WARNING)
    for text in MESSAGES:  # warm-up: first queries, prepared plans, model caches
        post(client, text)
        worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
    web_ms = []
    profiler = cProfile.Profile(time.process_time) if clock == "cpu" else cProfile.Profile()
    with measured_digest([], profiler if scope == "digest" else None):
        for index in range(requests):
            started = time.perf_counter()
            post(client, MESSAGES[index % len(MESSAGES)])
            web_ms.append((time.perf_counter() - started) * 1000)
            if scope == "job":
                profiler.enable()
            worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
            if scope == "job":
                profiler.disable()
            complete_lean(context)
    job_cpu_ms, digest_cpu_ms = [], []
    servers_before = servers.seconds() if servers is not None else {}
    with measured_digest(digest_cpu_ms):
        for index in range(requests):  # unprofiled, last: CPU and the spans below without cProfile's overhead
            post(client, MESSAGES[index % len(MESSAGES)])
            cpu = time.process_time()
            worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
            job_cpu_ms.append((time.process_time() - cpu) * 1000)
            complete_lean(context)
    servers_after = servers.seconds() if servers is not None else {}
    statements: Counter[str] = Counter()
    commands: Counter[str] = Counter()
    with counted_digest(context.engine, connection, statements, commands):
        for index in range(requests):  # counts, separately: INFO between the calls costs time
            post(client, MESSAGES[index % len(MESSAGES)])
            worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
            complete_lean(context)
    print(f"POST /chat in the app (validate, thread, log first event, enqueue): p50 {percentile(web_ms, 0.5):.2f} ms")
    print(f"CPU per job, no profiler: digest() p50 {percentile(digest_cpu_ms, 0.5):.2f} ms"
          f" (mean {statistics.fmean(digest_cpu_ms):.2f});  the whole burst-mode RQ run"
          f" p50 {percentile(job_cpu_ms, 0.5):.2f} ms (a burst worker registers and tears down per job)")
    if servers_after:  # a backend that exits meanwhile drops out: the worker's pooled ones live on
        spent = {name: (servers_after[name] - servers_before[name]) * 1000 / requests for name in servers_after}
        print("server CPU per job (same unprofiled round): " + ", ".join(f"{k} {v:.2f} ms" for k, v in spent.items()))
    print_spans(make_sessionmaker(engine), requests)
    print_counts(statements, commands, requests)
    if save:
        profiler.dump_stats(save)
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("cumulative").print_stats(top)
    print(buffer.getvalue())


@contextmanager
def measured_digest(samples: list[float], profiler: cProfile.Profile | None = None) -> Iterator[None]:
    """Record the CPU ms of every ``workers.digest.digest`` call (its thread's clock: no RQ, no other threads);
    with ``profiler``, profile just those calls."""
    import workers.digest as module

    original = module.digest

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.thread_time()
        if profiler is not None:
            profiler.enable()
        try:
            return original(*args, **kwargs)
        finally:
            if profiler is not None:
                profiler.disable()
            samples.append((time.thread_time() - started) * 1000)

    module.digest = timed
    try:
        yield
    finally:
        module.digest = original


@contextmanager
def counted_digest(engine, connection: redis.Redis, statements: Counter[str],  # type: ignore[no-untyped-def]
                   commands: Counter[str]) -> Iterator[None]:
    """Count the SQL statements and the Redis commands of every ``workers.digest.digest`` call."""
    import workers.digest as module

    original = module.digest

    def on_statement(_conn, _cursor, statement, *_):  # type: ignore[no-untyped-def]
        statements[" ".join(statement.split()[:4])[:60]] += 1

    send = redis.connection.AbstractConnection.send_packed_command
    command = psycopg.BaseConnection._exec_command  # psycopg's own round trips: BEGIN, COMMIT, ROLLBACK

    def commanded(self, text, *args, **kwargs):  # type: ignore[no-untyped-def]
        statements[bytes(text).decode()[:60]] += 1
        return command(self, text, *args, **kwargs)

    def sent(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        commands["(round trips)"] += 1  # one command, or one whole pipeline
        return send(self, *args, **kwargs)

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        before = _command_calls(connection)
        event.listen(engine, "before_cursor_execute", on_statement)
        redis.connection.AbstractConnection.send_packed_command = sent
        psycopg.BaseConnection._exec_command = commanded
        try:
            return original(*args, **kwargs)
        finally:
            psycopg.BaseConnection._exec_command = command
            redis.connection.AbstractConnection.send_packed_command = send
            event.remove(engine, "before_cursor_execute", on_statement)
            delta = _command_calls(connection) - before
            delta["info"] -= 1  # the INFO before the call
            commands.update(+delta)

    module.digest = counted
    try:
        yield
    finally:
        module.digest = original


def _command_calls(connection: redis.Redis) -> Counter[str]:
    stats = connection.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): value["calls"] for name, value in stats.items()})


def print_counts(statements: Counter[str], commands: Counter[str], requests: int) -> None:
    trips = commands.pop("(round trips)", 0)
    print(f"per digest(): {sum(statements.values()) / requests:.1f} SQL statements (BEGIN and COMMIT included),"
          f" {trips / requests:.1f} Redis round trips, {sum(commands.values()) / requests:.1f} Redis commands"
          " (those of Lua scripts included)")
    for name, count in statements.most_common():
        print(f"  sql   {count / requests:5.2f}  {name}")
    for name, count in commands.most_common():
        print(f"  redis {count / requests:5.2f}  {name}")


def complete_lean(context) -> None:  # type: ignore[no-untyped-def]
    """The lines and vectors the digest left to the chunker job (which this bench does not run)."""
    from services.memory.vectors import fill_all

    fill_all(context.sessions, context.embedder)


def post(client, text: str) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/chat", data=json.dumps({"text": text}), content_type="application/json", buffered=False)
    assert response.status_code == 200, response.get_data()
    response.close()


def print_spans(sessions, requests: int) -> None:  # type: ignore[no-untyped-def]
    with sessions() as session:
        rows = session.scalars(select(Exchange.timings).order_by(Exchange.id.desc()).limit(requests)).all()
    names = sorted({name for row in rows for name in row if name.endswith("_s")})
    print("digest timing spans (ms):")
    for name in names:
        values = [row[name] * 1000 for row in rows if name in row]
        print(f"  {name:<22} p50 {statistics.median(values):7.2f}   p99 {percentile(values, 0.99):7.2f}")


if __name__ == "__main__":
    main()
