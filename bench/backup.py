"""Backup and restore at scale: `engram backup` / `engram restore` of a data directory, timed, then verified.

    python -m bench.backup --data-dir DIR [--work DIR] [--queries 20]

DIR is an embedded data directory (e.g. one `engram import` filled with 100k exchanges). First every exchange
still without a vector gets one (the chunker's backfill, run here on two loops), so the backup holds a fully
embedded database. Then, as a person would run them (``python consumer.py``, its own embedded servers):
``engram backup`` (time, size), ``engram restore`` into a new data directory (time), and the checks: each
user's export before equals after, the same recall queries return the same ids in the same order, and the
stored vectors are the same bit for bit (an md5 over every exchange's vector, in id order).

``--into-urls``: restore instead into servers Engram did not start (``DATABASE_URL``/``REDIS_URL``), a
PostgreSQL and a Valkey this bench starts by hand from the embedded binaries under ``--work``.

How to read it: every check must say ``equal`` (a ``DIFFER`` is a defect, not noise); the times grow with the
database and are pessimistic on a loaded shared box (give the load average beside them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text

from services.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
NOW = dt.datetime.now(dt.UTC)  # every recall of the bench, before and after


def engram(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``engram ARGS`` (``python consumer.py``) and its wall time."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "consumer.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=4 * 3600)
    if done.returncode != 0:
        raise SystemExit(f"engram {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done, time.monotonic() - started


def embedded_env(data_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    return env | {"ENGRAM_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "ENGRAM_LOG_LEVEL": "WARNING"}


def fill_vectors(data_dir: Path) -> None:
    """Every exchange gets its vector (the backfill the chunker runs after an import)."""
    from cli.memory import connected, load_cli_embedder
    from services.memory.vectors import fill_all, pending_count

    settings = Settings.from_env(embedded_env(data_dir))
    with connected(settings) as conn:
        with conn.sessions() as session:
            pending = pending_count(session)
        if not pending:
            print("vectors: every exchange has one already", flush=True)
            return
        print(f"vectors: {pending} exchanges without one; filling", flush=True)
        started = time.monotonic()
        filled = fill_all(conn.sessions, load_cli_embedder(conn.settings), loops=2)
        took = time.monotonic() - started
        print(f"vectors: {filled} filled in {took:.0f} s ({filled / max(took, 1e-9):.0f}/s)", flush=True)


def fingerprint(env: dict[str, str]) -> dict[str, str]:
    """The users, and an md5 of every exchange's vector in id order (what a restore must bring back bit for bit)."""
    from cli.memory import connected

    with connected(Settings.from_env(env)) as conn, conn.engine.connect() as db:
        users = [row[0] for row in db.execute(text("SELECT DISTINCT user_id FROM exchanges ORDER BY 1"))]
        counts = db.execute(text("SELECT count(*), count(embedding) FROM exchanges")).one()
        vectors = db.execute(text("SELECT md5(string_agg(embedding::text, ';' ORDER BY id)) FROM exchanges")).scalar()
    return {"users": json.dumps(users), "exchanges": str(counts[0]), "with_vector": str(counts[1]),
            "vectors_md5": vectors or ""}


def queries_of(env: dict[str, str], n: int) -> list[tuple[str, str]]:
    """``n`` (user, query) pairs: the first words of exchanges spread evenly over the table (deterministic)."""
    from cli.memory import connected

    with connected(Settings.from_env(env)) as conn, conn.engine.connect() as db:
        rows = db.execute(text("SELECT user_id, user_text FROM exchanges WHERE id % (SELECT greatest(count(*) / :n, 1) "
                               "FROM exchanges) = 0 ORDER BY id LIMIT :n"), {"n": n}).all()
    return [(user, " ".join(str(said).split()[:8])) for user, said in rows if str(said).strip()]


def answers(env: dict[str, str], users: list[str], queries: list[tuple[str, str]], work: Path,
            tag: str) -> tuple[str, list[str]]:
    """The sha256 of each user's export (``exported_at`` left out) and the ids recall returns for each query.

    Recall runs here at one fixed moment (``NOW``) and without reinforcing what it finds: recency moves the scores
    from one minute to the next, and a reinforcing recall changes the database it is meant to compare."""
    from cli.memory import connected, load_cli_embedder
    from services.memory.config import load_memory_config
    from services.memory.recall import recall

    digests = []
    for user in users:
        out = work / f"export-{tag}-{hashlib.md5(user.encode()).hexdigest()[:8]}.json"
        engram(env, "export", "--user", user, "--out", str(out))
        bundle = json.loads(out.read_text())
        bundle.pop("exported_at", None)
        digests.append(hashlib.sha256(json.dumps(bundle, sort_keys=True).encode()).hexdigest())
        out.unlink()
    settings = Settings.from_env(env)
    config = load_memory_config(settings.configs_dir)
    ids = []
    with connected(settings) as conn:
        embedder = load_cli_embedder(conn.settings)
        for user, query in queries:
            with conn.sessions.begin() as session:
                hits = recall(session, embedder, user, query, k=10, config=config, now=NOW, reinforce=False)
            ids.append(json.dumps([(hit.kind, hit.id) for hit in hits]))
    return hashlib.sha256("".join(digests).encode()).hexdigest(), ids


@contextmanager
def external_servers(work: Path) -> Iterator[dict[str, str]]:
    """A PostgreSQL (pgvector) and a Valkey that `engram` did not start (as an operator's own servers would be):
    the URLs to restore into."""
    from tests.servers import start_postgres, start_redis

    postgres, valkey = start_postgres(work / "external-postgres"), start_redis(work / "external-redis")
    try:
        yield {"DATABASE_URL": postgres.url, "REDIS_URL": valkey.url}
    finally:
        postgres.stop()
        valkey.stop()


def restore_and_check(backup: Path, env: dict[str, str], where: str, before: dict[str, str],
                      expected: tuple[str, list[str]], users: list[str], queries: list[tuple[str, str]],
                      work: Path) -> bool:
    _, took = engram(env, "restore", str(backup))
    after = fingerprint(env)
    export_after, recall_after = answers(env, users, queries, work, "after")
    same = {"rows and vectors": after == before, "exports": export_after == expected[0],
            "recall ids": recall_after == expected[1]}
    alike = sum(a == b for a, b in zip(recall_after, expected[1], strict=False))
    print(f"restore into {where}: {took:.1f} s; " + ", ".join(f"{name} {'equal' if ok else 'DIFFER'}"
                                                             for name, ok in same.items())
          + f" ({alike} of {len(expected[1])} queries' ids the same, in the same order)", flush=True)
    return all(same.values())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="the embedded data directory to back up")
    parser.add_argument("--work", default="/tmp/engram-bench-backup", help="where the backup and restores go")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--into-urls", action="store_true", help="also restore into servers Engram did not start")
    parser.add_argument("--no-fill", action="store_true", help="back up the database as it is, vectors missing or not")
    args = parser.parse_args(argv)
    data_dir, work = Path(args.data_dir).resolve(), Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    source = embedded_env(data_dir)
    if not args.no_fill:
        fill_vectors(data_dir)
    before = fingerprint(source)
    users = json.loads(before["users"])
    queries = queries_of(source, args.queries)
    export_before, recall_before = answers(source, users, queries, work, "before")
    print(f"source: {before['exchanges']} exchanges ({before['with_vector']} with a vector) of {len(users)} user(s); "
          f"{len(recall_before)} recall queries", flush=True)

    backup = work / "engram.backup"
    backup.unlink(missing_ok=True)
    _, took = engram(source, "backup", str(backup))
    print(f"backup: {took:.1f} s, {backup.stat().st_size / 2**20:.1f} MiB ({backup})", flush=True)

    restored = work / "restored"
    shutil.rmtree(restored, ignore_errors=True)
    expected = (export_before, recall_before)
    ok = restore_and_check(backup, embedded_env(restored), "a new data directory", before, expected, users, queries,
                           work)
    if args.into_urls:
        for old in ("external-postgres", "external-redis"):
            shutil.rmtree(work / old, ignore_errors=True)
        with external_servers(work) as urls:
            ok &= restore_and_check(backup, {**embedded_env(work / "unused"), **urls},
                                    "servers engram did not start (DATABASE_URL, REDIS_URL)", before, expected,
                                    users, queries, work)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
