"""``engram services`` (what runs when, how it last went) and ``engram services run NAME``."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from typing import Any

from cli.arguments import CommandError, positive_int
from services.settings import Settings, SettingsError

OUTCOME_EXIT = {"ran": 0, "skipped": 0, "failed": 1}


def cmd_services(settings: Settings, args: argparse.Namespace) -> int:
    from cli.memory import connected
    from services.periodic.runs import last_runs, service_table
    from services.periodic.schedules import load_schedules, schedules_path

    try:
        specs = load_schedules(schedules_path(settings))
    except SettingsError as exc:
        raise CommandError(str(exc)) from None
    if args.action == "run":
        return _run(settings, specs, args)
    with connected(settings) as conn, conn.sessions() as session:
        table = service_table(specs, last_runs(session), dt.datetime.now(dt.UTC))
    if args.json:
        print(json.dumps(table))
    else:
        _print_table(table)
    return 0


def _run(settings: Settings, specs: dict[str, Any], args: argparse.Namespace) -> int:
    from rq import Queue, Worker

    from cli.memory import connected
    from services.periodic.firing import fire_manual
    from services.periodic.runs import run_outcome

    if not args.name:
        raise CommandError("which service? usage: engram services run NAME")
    spec = specs.get(args.name)
    if spec is None:
        raise CommandError(f"unknown service {args.name!r}; services: {', '.join(sorted(specs))}")
    with connected(settings) as conn:
        if conn.redis is None:
            raise CommandError("no Redis to queue the run on")
        fire_id = fire_manual(conn.redis, spec, dt.datetime.now(dt.UTC))
        print(f"queued {spec.name} on {spec.queue} as {fire_id}")
        if not Worker.all(queue=Queue(spec.queue, connection=conn.redis)):
            print(f"no worker listens on {spec.queue} yet: it runs when `engram run` is up")
            return 1
        deadline = time.monotonic() + args.wait
        while time.monotonic() < deadline:
            with conn.sessions() as session:
                row = run_outcome(session, spec.name, fire_id)
            if row is not None and row.outcome != "running":
                reason = f": {row.reason}" if row.reason else ""
                print(f"{spec.name}: {row.outcome}{reason} ({row.duration_ms} ms) {json.dumps(row.details)}")
                return OUTCOME_EXIT.get(row.outcome, 1)
            time.sleep(0.25)
    print(f"{spec.name}: still running after {args.wait} s; see `engram services` later")
    return 1


def _print_table(table: list[dict[str, Any]]) -> None:
    header = ("SERVICE", "SCHEDULE", "ENABLED", "LAST RUN (UTC)", "OUTCOME", "NEXT RUN (UTC)")
    rows = [(row["name"], row["schedule"], "yes" if row["enabled"] else "no", _short(row["last_run_at"]) or "never",
             _outcome(row), _short(row["next_run_at"]) or "-") for row in table]
    widths = [max(len(str(line[i])) for line in [header, *rows]) for i in range(len(header))]
    for line in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())


def _outcome(row: dict[str, Any]) -> str:
    if not row["last_outcome"]:
        return "-"
    reason = f" ({row['last_reason']})" if row["last_reason"] else ""
    duration = f" {row['last_duration_ms']} ms" if row["last_duration_ms"] is not None else ""
    return f"{row['last_outcome']}{duration}{reason}"[:80]


def _short(value: str | None) -> str:
    return value[:19].replace("T", " ") if value else ""


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``services`` to the ``engram`` parser."""
    p = commands.add_parser("services", help="list periodic services (schedule, last run, next run) or run one now")
    p.add_argument("action", nargs="?", choices=("list", "run"), default="list")
    p.add_argument("name", nargs="?", help="the service to run (with `run`)")
    p.add_argument("--json", action="store_true", help="the list as JSON (like GET /ops/services)")
    p.add_argument("--wait", type=positive_int, default=120, help="seconds to wait for a run's outcome")
    p.set_defaults(handler=cmd_services)
