"""Round trips per chat: Redis commands (MONITOR) and PostgreSQL statements (the server log), by role.

Starts `engram run` on the embedded default like bench/pipeline.py, sends a few warm-up chats,
then records every Redis command (MONITOR) and every PostgreSQL statement (``log_statement =
all`` for the measured chats only) while N chats run one after another, and attributes each to
the process that sent it (its client port → pid → role, as bench/cpu.py names roles). Counts
are per chat; they do not depend on the machine's load, so they are the steadiest A/B number.

    python -m bench.commands [--requests 20] [--top 12]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import psycopg
import redis

from bench.cpu import role_of
from bench.pipeline import MESSAGES, ChatClient, unthrottled_configs, wait_for_roles
from tests.fake_llm import FakeLLM
from tests.system import running_system

MONITOR_LINE = re.compile(r'^([\d.]+) \[\d+ (?:[\d.]+|\[[^]]*\]):(\d+)\] "([^"]+)"(?: "([^"]*)")?')
# Commands of one client this close together were sent as one pipeline: one round trip.
PIPELINED_WITHIN_S = 0.0002
# Simple-protocol statements log as "statement: …", prepared ones (psycopg's usual) as "execute <name>: …".
PG_LINE = re.compile(r"^(\d+)\|LOG:  (?:statement|execute [^:]*): (.*)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--top", type=int, default=12, help="commands / statements listed per role")
    parser.add_argument("--dump", type=Path, help="also write every Redis command, with its role, to this file")
    args = parser.parse_args()
    llm = FakeLLM().start()
    token = "bench-commands"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            configs = unthrottled_configs(Path(tmp) / "configs")
            with running_system(Path(tmp) / "data", OPENAI_BASE_URL=llm.url, ENGRAM_LOCAL_LLM="false",
                                ENGRAM_LOG_LEVEL="WARNING", ENGRAM_DIGEST_WORKERS="1",
                                ENGRAM_CONFIGS_DIR=str(configs), ENGRAM_API_TOKENS=f"{token}:u0") as engram:
                redis_url, database_url = engram.urls()
                wait_for_roles(redis_url)
                pg_log = Path(tmp) / "data" / "postgres" / "server.log"
                measure(engram.base_url, token, redis_url, database_url, pg_log, args.requests, args.top,
                        args.dump)
    finally:
        llm.stop()


def measure(base_url: str, token: str, redis_url: str, database_url: str, pg_log: Path, requests: int,
            top: int, dump: Path | None) -> None:
    with ChatClient(base_url, token) as client:
        for text in MESSAGES:
            client.chat(text)
        settle()
        set_statement_logging(database_url, "all")
        log_offset = pg_log.stat().st_size
        lines: list[str] = []
        stop = threading.Event()
        monitor = threading.Thread(target=record_monitor, args=(redis_url, lines, stop), daemon=True)
        monitor.start()
        time.sleep(0.3)
        for index in range(requests):
            client.chat(MESSAGES[index % len(MESSAGES)])
        settle()
        ports = client_ports()  # before the clients' connections could go away
        pg_pids = backend_clients(database_url)
        stop.set()
        monitor.join(timeout=5)
        set_statement_logging(database_url, "none")
    report_redis(lines, ports, requests, top)
    if dump is not None:
        dump.write_text("".join(f"{role(ports.get(int(m.group(2))))}\t{line}\n" for line in lines
                                if (m := MONITOR_LINE.match(line)) is not None))
    with pg_log.open(errors="replace") as log:
        log.seek(log_offset)
        report_postgres(log.read(), pg_pids, ports, requests, top)


def settle() -> None:
    """Let the enrichment a chat queued run too: it is part of what a chat costs."""
    time.sleep(3)


def record_monitor(redis_url: str, lines: list[str], stop: threading.Event) -> None:
    connection = redis.Redis.from_url(redis_url, decode_responses=True)
    with connection.monitor() as monitor:
        for command in monitor.listen():
            if stop.is_set():
                return
            lines.append(f'{command["time"]} [{command["db"]} {command["client_address"]}:{command["client_port"]}] '
                         + " ".join(f'"{part}"' for part in command["command"].split(" ")))


def client_ports() -> dict[int, int]:
    """Local TCP port → pid of every connection of this machine's processes."""
    return {conn.laddr.port: conn.pid for conn in psutil.net_connections(kind="tcp")
            if conn.pid is not None and conn.laddr}


def backend_clients(database_url: str) -> dict[int, int]:
    """PostgreSQL backend pid → client port."""
    with psycopg.connect(database_url) as connection:
        rows = connection.execute("SELECT pid, client_port FROM pg_stat_activity WHERE client_port IS NOT NULL")
        return {pid: port for pid, port in rows}


def set_statement_logging(database_url: str, value: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(f"ALTER SYSTEM SET log_statement = '{value}'")
        connection.execute("ALTER SYSTEM SET log_line_prefix = '%p|'")
        connection.execute("SELECT pg_reload_conf()")
    time.sleep(0.5)


def role(pid: int | None) -> str:
    return "?" if pid is None else role_of(pid, psutil.Process().pid)


def report_redis(lines: list[str], ports: dict[int, int], requests: int, top: int) -> None:
    by_role: dict[str, Counter[str]] = {}
    trips: Counter[str] = Counter()
    last_seen: dict[int, float] = {}
    for line in lines:
        match = MONITOR_LINE.match(line)
        if match is None:
            continue
        at, port, command = float(match.group(1)), int(match.group(2)), match.group(3).upper()
        key = match.group(4) or ""
        prefix = key.split(":", 1)[0] if command not in {"EVALSHA", "EVAL"} else "script"
        who = role(ports.get(port))
        by_role.setdefault(who, Counter())[f"{command} {prefix}"] += 1
        if at - last_seen.get(port, float("-inf")) > PIPELINED_WITHIN_S:
            trips[who] += 1
        last_seen[port] = at
    total = sum(sum(counts.values()) for counts in by_role.values())
    print(f"Redis commands per chat: {total / requests:.1f}, round trips {sum(trips.values()) / requests:.1f}"
          " (by role: " + ", ".join(f"{who} {count / requests:.1f}" for who, count in trips.most_common()) + ")")
    print_roles(by_role, requests, top)


def report_postgres(log: str, backends: dict[int, int], ports: dict[int, int], requests: int, top: int) -> None:
    by_role: dict[str, Counter[str]] = {}
    for line in log.splitlines():
        match = PG_LINE.match(line)
        if match is None:
            continue
        backend, statement = int(match.group(1)), match.group(2)
        port = backends.get(backend)
        who = role(ports.get(port)) if port is not None else "?"
        by_role.setdefault(who, Counter())[" ".join(statement.split())[:70]] += 1
    total = sum(sum(counts.values()) for counts in by_role.values())
    print(f"PostgreSQL statements per chat: {total / requests:.1f}")
    print_roles(by_role, requests, top)


def print_roles(by_role: dict[str, Counter[str]], requests: int, top: int) -> None:
    for name, counts in sorted(by_role.items(), key=lambda item: -sum(item[1].values())):
        print(f"  {name:<30} {sum(counts.values()) / requests:6.1f}")
        for what, count in counts.most_common(top):
            print(f"      {count / requests:5.2f}  {what}")


if __name__ == "__main__":
    main()
