"""Engram's entry point: ``engram`` / ``python consumer.py``.

``engram run`` starts every role under one supervisor (with the embedded PostgreSQL and
Redis, and the local model, when no URLs are configured); ``engram run ROLE`` runs one.
Other subcommands (migrate, route, recall, import, export, forget) work on the embedded
default too: they attach to the servers a running ``engram run`` started, or start them.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy.exc import OperationalError

from cli.arguments import CommandError
from services.errors import EmbeddedServerError
from services.logs import configure_logging
from services.settings import Settings, SettingsError

if TYPE_CHECKING:
    import redis

    from services.supervisor import Supervisor

logger = logging.getLogger("engram")

ROLES = ("web", "digest", "chunker", "episodic", "background", "periodic", "scheduler")
WORKER_QUEUES = {
    "digest": "prompt-queue",
    "chunker": "memory-chunker-queue",
    "episodic": "episodic-memory-queue",
    "background": "background-queue",
    "periodic": "periodic-queue",
}
# Access log lines as JSON like every other log line, with the request id the response carries.
ACCESS_LOG_FORMAT = (
    '{"ts": "%(t)s", "level": "INFO", "logger": "gunicorn.access", "role": "web", "msg": "%(m)s %(U)s", '
    '"status": %(s)s, "duration_ms": %(M)s, "request_id": "%({x-request-id}o)s"}'
)
LOCAL_LLM_ROLE = "llm"
# Off-the-hot-path processes run at a lower CPU priority (settings.housekeeping_nice): on 2 cores, a
# chat reply should never share them evenly with the chunker's model.
HOUSEKEEPING_ROLES = ("chunker", "episodic", "background")
LOCAL_MODEL_BANNER = (
    "No OPENAI_BASE_URL set: answering with {label}, a small offline model on this machine's CPU.\n"
    "For stronger answers point Engram at any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp):\n"
    "  OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... engram run"
)


def role_argv(role: str, settings: Settings) -> list[str]:
    """The command line of one role's process."""
    python = sys.executable
    if role == "web":
        return [
            python, "-m", "gunicorn", "-k", "gevent", "-w", str(settings.web_workers),
            "--worker-connections", "2000", "-b", f"{settings.host}:{settings.port}",
            "--timeout", "60", "--graceful-timeout", "5", "--access-logfile", "-",
            "--access-logformat", ACCESS_LOG_FORMAT, "api.wsgi:make_app()",
        ]  # fmt: skip
    if role in WORKER_QUEUES:
        worker_class = "workers.startup.PeriodicWorker" if role == "periodic" else "workers.startup.EngramWorker"
        return [
            python, "-m", "rq.cli", "worker", WORKER_QUEUES[role], "-u", settings.redis_url or "",
            # No --with-scheduler: the scheduler role moves retries for every queue (services/janitor.py says why).
            "-w", worker_class, "--worker-ttl", "30", "--logging_level", "WARNING",
        ]  # fmt: skip
    if role == "scheduler":
        return [python, "-m", "workers.scheduler"]
    raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")


def cmd_run(settings: Settings, roles: Sequence[str]) -> int:
    """Start the embedded servers if needed, migrate, then supervise the roles."""
    import redis

    from services.embedded.servers import ensure_servers
    from services.supervisor import Role, Supervisor, adopt_orphans, child_env, raise_open_files_limit

    llm_roles, llm_env = _llm_roles(settings, roles)  # fail fast, before starting anything
    raise_open_files_limit()  # inherited by every role: the web process holds a descriptor per open stream
    adopt_orphans()  # before the servers start: they daemonize into the supervisor's children
    handle = ensure_servers(settings) if settings.uses_embedded else None
    if handle is not None:
        settings = handle.apply(settings)
    try:
        _migrate(settings)
        urls = {"REDIS_URL": settings.redis_url or "", "DATABASE_URL": settings.database_url or ""}
        # The children get the data dir as an absolute path: `./data` means where `engram run` started.
        env = child_env(os.environ, **urls, **llm_env, ENGRAM_DATA_DIR=str(settings.data_dir))
        supervised = [
            Role(name, role_argv(kind, settings), {**env, "ENGRAM_ROLE": kind}, heartbeat=kind != "web",
                 nice=settings.housekeeping_nice if kind in HOUSEKEEPING_ROLES else 0)
            for kind, name in _instances(roles, settings)
        ] + llm_roles
        client = redis.Redis.from_url(settings.redis_url or "")
        # /healthz stays 503 until the local servers answered their test completion (or says why not).
        _record_start_check(client, "pending" if llm_roles else None)
        servers = handle.servers if handle is not None else []
        supervisor = Supervisor(supervised, redis_client=client, hung_after_s=settings.hung_after_s, servers=servers)
        if "web" in roles:
            logger.info("Engram is starting on http://%s:%s", settings.host, settings.port)
        return supervisor.run(after_start=functools.partial(_check_llm_servers, warm=_warm_prompt(settings))
                              if llm_roles else None)
    finally:
        if handle is not None:
            handle.stop()


def _instances(roles: Sequence[str], settings: Settings) -> list[tuple[str, str]]:
    """(role, instance name) pairs: ENGRAM_DIGEST_WORKERS digest workers, one of everything else."""
    pairs: list[tuple[str, str]] = []
    for role in roles:
        count = max(1, settings.digest_workers) if role == "digest" else 1
        pairs += [(role, role if n == 0 else f"{role}-{n + 1}") for n in range(count)]
    return pairs


def _llm_roles(settings: Settings, roles: Sequence[str]) -> tuple[list, dict[str, str]]:  # type: ignore[type-arg]
    """The local model as supervised roles, when no endpoint is configured.

    One server for everything: housekeeping requests wait while a chat turn generates
    (services/llm/priority.py), one already running finishes first. A second server for housekeeping
    was slower for chat and housekeeping alike on 2 cores and used ~400 MB more (bench/RESULTS.md).
    """
    from services.llm.local import local_llm_command, local_llm_model, local_llm_port, local_llm_url
    from services.supervisor import Role

    needs_llm = any(role in WORKER_QUEUES for role in roles) or "web" in roles
    if settings.openai_base_url or not needs_llm:
        return [], {}
    # Raises with both ways to fix it when there is none, and refuses a file that is not the pinned bytes.
    local = local_llm_model(settings, say=lambda line: print(f"engram: {line}", file=sys.stderr))
    if local is None:
        return [], {}
    model, model_path = local
    port = local_llm_port(settings)
    print(LOCAL_MODEL_BANNER.format(label=model.label), file=sys.stderr)
    threads = settings.local_llm_threads or model.n_threads
    servers = [Role(LOCAL_LLM_ROLE, local_llm_command(model_path, port, n_ctx=model.n_ctx, n_threads=threads),
                    dict(os.environ), heartbeat=False)]
    env = {"OPENAI_BASE_URL": local_llm_url(port)}
    if settings.llm_profile == "auto":
        env["ENGRAM_LLM_PROFILE"] = "compact"  # a small local model needs the small-model profile
    return servers, env


def _check_llm_servers(supervisor: Supervisor, warm: str = "") -> bool:
    """One real completion from the local server before Engram says it is up; a clear message if it fails."""
    from services.llm.local import ServerProcess, check_local_llm, local_llm_url

    child = supervisor.children[LOCAL_LLM_ROLE]
    port = child.role.argv[child.role.argv.index("--port") + 1]
    problem = check_local_llm(ServerProcess(LOCAL_LLM_ROLE, local_llm_url(int(port)), child.process), system=warm)
    _record_start_check(supervisor.redis, problem)
    if problem:
        print(f"engram: the local LLM cannot answer: {problem}.\n"
              f"  Or use an endpoint instead: OPENAI_BASE_URL=... OPENAI_API_KEY=... engram run", file=sys.stderr)
        return False
    logger.info("the local LLM server answered a test completion")
    return True


def _warm_prompt(settings: Settings) -> str:
    """The system prompt every chat turn of the small-model profile begins with ("" under the full profile).

    The start check is asked under it, so llama.cpp's prompt cache holds it before the first message: the
    first reply after `engram run` then reads only its own part (~140 tokens fewer, ~3 s for the 1.5B here).
    """
    from services.llm.profile import COMPACT_PROMPTS
    from services.prompts import PromptLibrary

    if settings.llm_profile not in ("auto", "compact"):
        return ""
    return PromptLibrary(settings.prompts_dir).render(f"{COMPACT_PROMPTS}/respond").strip()


def _record_start_check(client: redis.Redis | None, problem: str | None) -> None:
    from services.llm.health import mark_start_check

    if client is None:
        return
    try:
        mark_start_check(client, problem)
    except Exception:  # health bookkeeping must never stop the start itself
        logger.warning("could not record the local LLM start check", exc_info=True)


def _migrate(settings: Settings) -> str:
    from services.db import make_engine
    from services.migrate import upgrade_head

    engine = make_engine(settings.database_url or "")
    try:
        return upgrade_head(engine)
    finally:
        engine.dispose()


def cmd_migrate(settings: Settings) -> int:
    from services.embedded.servers import ensure_servers

    handle = ensure_servers(settings, want_redis=False) if settings.database_url is None else None
    try:
        url = handle.database_url if handle is not None else settings.database_url
        revision = _migrate(settings.with_urls(settings.redis_url or "", url or ""))
        print(f"database at revision {revision}")
        return 0
    finally:
        if handle is not None:
            handle.stop()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="engram", description="Engram cognitive assistant backend")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run every role (or one) under the supervisor")
    run.add_argument("role", nargs="?", choices=ROLES, help="run only this role")
    commands.add_parser("migrate", help="upgrade the database schema to the newest migration")
    from cli.commands import register_commands

    register_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ROLES:  # `python consumer.py [ROLE]` is `engram run [ROLE]`
        argv = ["run", *argv]
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"engram: configuration error: {exc}", file=sys.stderr)
        return 2
    # Commands print their own results; only `run` logs at INFO unless asked otherwise.
    quiet = args.command != "run" and settings.log_level == "INFO"
    configure_logging("WARNING" if quiet else settings.log_level, role=args.command)
    try:
        if args.command == "run":
            return cmd_run(settings, [args.role] if args.role else list(ROLES))
        if args.command == "migrate":
            return cmd_migrate(settings)
        return int(args.handler(settings, args))
    except EmbeddedServerError as exc:
        print(f"engram: {exc}", file=sys.stderr)
        return 2
    except OperationalError as exc:
        print(f"engram {args.command}: cannot reach PostgreSQL: {exc.orig}", file=sys.stderr)
        return 2
    except CommandError as exc:
        print(f"engram {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `engram route ... | head`: the reader left, which is fine
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
