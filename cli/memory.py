"""``engram import | recall | export | forget``: the user's memory from the command line.

Each command attaches to the configured servers (or the embedded default: it starts them, or
joins the ones a running ``engram run`` started), makes sure the schema is current, and loads
the embedding model only when it needs one (recall, import).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from cli.arguments import CommandError, one_input, open_input, positive_int
from services.embeddings import Embedder
from services.settings import Settings

EXIT_BAD_LINES = 1


@dataclass
class Connected:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    redis: redis.Redis | None


@contextmanager
def connected(settings: Settings) -> Iterator[Connected]:
    """Servers (embedded when no URLs are set), a migrated database and a Redis client; all closed after."""
    from services.db import make_engine, make_sessionmaker
    from services.migrate import upgrade_head

    handle = None
    if settings.uses_embedded:
        from services.embedded.servers import ensure_servers

        handle = ensure_servers(settings)
        settings = handle.apply(settings)
    engine = make_engine(settings.database_url or "")
    client = redis.Redis.from_url(settings.redis_url) if settings.redis_url else None
    try:
        upgrade_head(engine)
        yield Connected(settings, engine, make_sessionmaker(engine), client)
    finally:
        if client is not None:
            client.close()
        engine.dispose()
        if handle is not None:
            handle.stop()


def load_cli_embedder(settings: Settings) -> Embedder:
    from services.embeddings import load_embedder

    return load_embedder(settings.embedder, graph_dir=settings.models_dir)


def cmd_import(settings: Settings, args: argparse.Namespace, *, embedder: Embedder | None = None) -> int:
    """Load a JSONL conversation file (or an export bundle); bad lines are reported, good ones load."""
    from tqdm import tqdm

    from services.bundle import BundleInvalid, import_bundle, is_bundle, validate_bundle
    from services.memory.importer import ImportReport, pair_exchanges, parse_lines, store_records

    with open_input(args.file) as handle:
        raw = handle.read()
    bundle = _as_bundle(raw, is_bundle)
    if bundle is not None:
        try:  # before any server starts or the model loads
            validate_bundle(bundle)
        except BundleInvalid as exc:
            raise CommandError(f"{args.file}: {exc}") from None
    report = ImportReport()
    if bundle is None:
        lines, bad, count = parse_lines(raw.splitlines())
        report.lines, report.bad = count, bad
        for item in bad:
            print(f"{args.file}: line {item.number}: {item.reason}", file=sys.stderr)
        records = pair_exchanges(lines)
    with connected(settings) as conn:
        if embedder is None and (args.embed_now or bundle is not None):  # a bundle's facts and episodes embed now
            embedder = load_cli_embedder(conn.settings)
        connection = None if args.no_enrich else conn.redis
        total = len(bundle.get("exchanges", [])) if bundle is not None else len(records)
        with tqdm(total=total, unit="exchange", file=sys.stderr, disable=args.quiet) as bar:
            started = time.monotonic()
            if bundle is not None:
                report = import_bundle(conn.sessions, embedder, args.user, bundle, progress=bar.update,
                                       connection=connection, batch_size=args.batch_size, embed=args.embed_now)
            else:
                store_records(conn.sessions, embedder, args.user, records, batch_size=args.batch_size,
                              progress=bar.update, connection=connection, report=report, embed=args.embed_now)
            elapsed = time.monotonic() - started
        vectors = {} if args.embed_now else _vectors_follow(conn, report.stored)
    summary = report.summary() | {"seconds": round(elapsed, 2),
                                  "exchanges_per_s": round(report.stored / elapsed, 1) if elapsed > 0 else None,
                                  **vectors}
    print(json.dumps(summary))
    return EXIT_BAD_LINES if report.bad else 0


def _vectors_follow(conn: Connected, stored: int) -> dict[str, Any]:
    """Queue the vector backfill and say so: how many exchanges were stored and how many wait for a vector."""
    from services.memory.vectors import pending_count, try_enqueue_backfill

    queued = try_enqueue_backfill(conn.redis)
    with conn.sessions() as session:
        pending = pending_count(session)
    if pending:
        who = ("queued for the memory workers" if queued and _chunker_workers(conn.redis)
               else "`engram run`'s memory workers compute them; its vector_backfill service queues them")
        print(f"engram import: {stored} exchanges stored, searchable by their words now; their meaning vectors are "
              f"computed in the background ({pending} waiting; {who}). --embed-now waits for them.", file=sys.stderr)
    return {"vectors": "background", "vectors_pending": pending}


def _chunker_workers(connection: redis.Redis | None) -> int:
    from rq import Queue, Worker

    from services.queues import MEMORY_CHUNKER_QUEUE

    try:
        return len(Worker.all(queue=Queue(MEMORY_CHUNKER_QUEUE, connection=connection))) if connection else 0
    except redis.RedisError:
        return 0


def _as_bundle(raw: str, is_bundle: Any) -> dict[str, Any] | None:
    if not raw.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None  # JSON lines, not one document
    return data if is_bundle(data) else None


def cmd_recall(settings: Settings, args: argparse.Namespace, *, embedder: Embedder | None = None) -> int:
    """Ranked memories for a query (or one query per line of --file) with per-signal scores and provenance."""
    from services.memory.config import load_memory_config
    from services.memory.recall import recall

    one_input(args.query, args.file, "query")
    queries = _queries(args)  # a missing file is reported before any server starts
    config = load_memory_config(settings.configs_dir)
    with connected(settings) as conn:
        embedder = embedder or load_cli_embedder(conn.settings)
        for query in queries:
            started = time.perf_counter()
            with conn.sessions.begin() as session:
                hits = recall(session, embedder, args.user, query, k=args.k, config=config)
            latency_ms = round((time.perf_counter() - started) * 1000, 2)
            if args.json or args.file:
                results = [{key: value for key, value in hit.to_dict().items()
                            if key in ("text", "kind", "score", "signals", "exchange_ids", "external_ids", "id",
                                       "at", "lines")} for hit in hits]
                print(json.dumps({"query": query, "results": results, "latency_ms": latency_ms}), flush=True)
            else:
                _print_hits(query, hits, latency_ms)
    return 0


def _queries(args: argparse.Namespace) -> list[str]:
    if not args.file:
        return [args.query]
    with open_input(args.file) as handle:
        return [line.strip() for line in handle if line.strip()]


def _print_hits(query: str, hits: list[Any], latency_ms: float) -> None:
    print(f"{len(hits)} result(s) for {query!r} in {latency_ms:.1f} ms")
    for rank, hit in enumerate(hits, start=1):
        text = " ".join(hit.text.split())
        print(f"{rank:>2}. [{hit.kind} #{hit.id}] score {hit.score:.4f}  {text[:160]}")
        signals = "  ".join(f"{name} {value:g}" for name, value in hit.signals.items())
        print(f"    {signals}")
        print(f"    exchanges {hit.exchange_ids[:8]}  external {hit.external_ids[:8]}")


def cmd_export(settings: Settings, args: argparse.Namespace) -> int:
    """Write the user's bundle (JSON) to --out or stdout."""
    from services.bundle import export_bundle

    with connected(settings) as conn, conn.sessions() as session:
        bundle = export_bundle(session, args.user)
    payload = json.dumps(bundle, ensure_ascii=False)
    if args.out and args.out != "-":
        Path(args.out).write_text(payload, encoding="utf-8")
        counts = {key: len(bundle[key]) for key in ("exchanges", "facts", "episodes", "chunks", "sessions", "lists",
                                                    "reminders", "goals")}
        print(json.dumps({"written": args.out} | counts))
    else:
        print(payload)
    return 0


def cmd_forget(settings: Settings, args: argparse.Namespace) -> int:
    """Purge everything of a user from every store, after confirmation on a terminal."""
    from services.memory.forget import forget_user

    if not args.yes and sys.stdin.isatty():
        answer = input(f"Delete every memory, message and queued job of user {args.user!r}? Type the user id: ")
        if answer.strip() != args.user:
            print("nothing deleted", file=sys.stderr)
            return 1
    with connected(settings) as conn:
        report = forget_user(conn.sessions, conn.redis, args.user)
    print(json.dumps(report.to_dict()))
    return 0


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``import``, ``recall``, ``export`` and ``forget`` to the ``engram`` parser."""
    p = commands.add_parser("import", help="import past conversations (JSONL) or an export bundle")
    p.add_argument("file", help="JSONL file (session, speaker|role, text, timestamp, external_id?), bundle, or -")
    p.add_argument("--user", required=True)
    p.add_argument("--no-enrich", action="store_true", help="store and index only; queue no LLM enrichment")
    p.add_argument("--batch-size", type=positive_int, default=256)
    p.add_argument("--embed-now", action="store_true",
                   help="compute the meaning vectors before returning (slower); by default workers compute them "
                        "in the background and the words are searchable at once")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=cmd_import)
    p = commands.add_parser("recall", help="search a user's memory")
    p.add_argument("query", nargs="?")
    p.add_argument("--user", required=True)
    p.add_argument("--k", type=positive_int, default=10)
    p.add_argument("--json", action="store_true", help="one JSON object per query")
    p.add_argument("--file", help="one query per line (- for stdin); prints one JSON object per line")
    p.set_defaults(handler=cmd_recall)
    p = commands.add_parser("export", help="write everything a user has as a JSON bundle")
    p.add_argument("--user", required=True)
    p.add_argument("--out", help="file to write (default: stdout)")
    p.set_defaults(handler=cmd_export)
    p = commands.add_parser("forget", help="delete everything of a user from every store")
    p.add_argument("--user", required=True)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=cmd_forget)

