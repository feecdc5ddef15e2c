"""Backup and restore: one file holding everything a person would lose.

A backup is a tar file of three members:

- ``postgres.dump``: ``pg_dump --format=custom`` of the database (exchanges, memory, vectors,
  reminders, lists, ...), one consistent snapshot taken while Engram keeps serving;
- ``redis.jsonl``: the Redis state that nothing rebuilds (``KEPT_PREFIXES``: each person's proactive
  event log, the idempotency keys that keep a reminder from being delivered twice, the threads'
  working memory), read *after* the database snapshot, so an event the database does not know as
  sent yet is in it with its idempotency key (a restored reminder is delivered once, not twice);
  queues, leases, request logs, rate limits and metrics are transient and left out;
- ``manifest.json``: format, time, schema revision, counts and each member's sha256.

It is written under a temporary name beside ``PATH`` and renamed at the end, so ``PATH`` is a whole
backup or absent. A restore checks the manifest and the checksums first, then loads everything into
a staging data directory (its own embedded servers), and renames that into place only when all of it
went in; with ``DATABASE_URL``/``REDIS_URL`` set it restores into those, which must be empty.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import redis
from sqlalchemy import text
from sqlalchemy.engine import Engine

from services.embedded.lifecycle import to_libpq_url
from services.embedded.postgres import pg_tool
from services.settings import Settings

FORMAT = "engram-backup"
VERSION = 1
MANIFEST, DUMP, REDIS_STATE = "manifest.json", "postgres.dump", "redis.jsonl"
KEPT_PREFIXES = ("events:sse:user:", "events:once:", "thread:state:", "thread:wm:", "threads:active",
                 "user:current_thread:")
TOOL_TIMEOUT_S = 6 * 3600


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why, for the person at the terminal."""


@dataclass(frozen=True)
class Summary:
    path: Path
    bytes: int
    seconds: float
    exchanges: int
    users: int
    redis_keys: int


def write_backup(engine: Engine, connection: redis.Redis, database_url: str, path: Path) -> Summary:
    """Write a backup of the database behind ``engine`` (``database_url``) and of ``connection``'s kept keys."""
    begun = time.monotonic()
    path = path.expanduser().absolute()
    if path.is_dir():
        raise BackupError(f"{path} is a directory: give the backup file's name, e.g. {path / 'engram.backup'}")
    if not path.parent.is_dir():
        raise BackupError(f"{path.parent} does not exist")
    if not os.access(path.parent, os.W_OK):
        raise BackupError(f"cannot write in {path.parent}")
    with tempfile.TemporaryDirectory(prefix=".engram-backup-", dir=path.parent) as work:
        pieces = Path(work)
        # pg_dump writes as the caller; as root the file stays root's (pg_dump, unlike the server, runs as root).
        _run(pg_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={pieces / DUMP}",
             f"--dbname={to_libpq_url(database_url)}")
        keys = _write_redis_state(connection, pieces / REDIS_STATE)  # after the snapshot: see the module's doc
        with engine.connect() as db:
            counts = {name: int(db.execute(text(sql)).scalar_one()) for name, sql in (
                ("exchanges", "SELECT count(*) FROM exchanges"),
                ("users", "SELECT count(DISTINCT user_id) FROM exchanges"))}
            revision = db.execute(text("SELECT version_num FROM alembic_version")).scalar()
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        manifest = {"format": FORMAT, "version": VERSION, "created_at": created, "alembic_revision": revision,
                    **counts, "redis_keys": keys,
                    "members": {name: _sha256(pieces / name) for name in (DUMP, REDIS_STATE)}}
        (pieces / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        partial = pieces / "backup.tar"
        with tarfile.open(partial, "w") as archive:
            for name in (MANIFEST, DUMP, REDIS_STATE):  # the manifest first: a reader checks it before the rest
                archive.add(pieces / name, arcname=name)
        with partial.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, path)  # same directory: atomic
    return Summary(path, path.stat().st_size, time.monotonic() - begun, counts["exchanges"], counts["users"], keys)


def read_manifest(path: Path) -> dict[str, Any]:
    """The backup's manifest, after checking that the file is a whole, uncorrupted Engram backup."""
    path = path.expanduser()
    if not path.is_file():
        raise BackupError(f"{path}: no such backup file")
    try:
        with tarfile.open(path, "r") as archive:
            names = archive.getnames()
            if MANIFEST not in names:
                raise BackupError(f"{path} is not an Engram backup (no {MANIFEST})")
            manifest = json.loads(_member(archive, MANIFEST).read())
            if manifest.get("format") != FORMAT:
                raise BackupError(f"{path} is not an Engram backup")
            if manifest.get("version") != VERSION:
                raise BackupError(f"{path} is a backup of format {manifest.get('version')}; "
                                  f"this Engram reads format {VERSION}")
            for name, expected in manifest["members"].items():
                if name not in names:
                    raise BackupError(f"{path} is incomplete: {name} is missing")
                if _sha256_of(_member(archive, name)) != expected:
                    raise BackupError(f"{path} is corrupt: {name} does not match its checksum")
    except (tarfile.TarError, EOFError, json.JSONDecodeError, KeyError, OSError) as exc:
        raise BackupError(f"{path} is corrupt or not an Engram backup ({exc})") from None
    return manifest


def restore_backup(path: Path, settings: Settings) -> dict[str, Any]:
    """Restore ``path`` into ``settings``' servers (empty ones), or into an empty embedded data directory."""
    manifest = read_manifest(path)
    if settings.uses_embedded:
        _restore_embedded(path, settings)
    else:
        _restore_into(path, settings)
    return manifest


def _restore_embedded(path: Path, settings: Settings) -> None:
    from services.embedded.servers import ensure_servers

    target = settings.data_dir.absolute()
    _require_empty_data_dir(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.restoring-", dir=target.parent))
    try:
        staged = replace(settings, data_dir=staging)
        with ensure_servers(staged) as handle:
            _restore_into(path, handle.apply(staged))
        shutil.rmtree(staging / "run", ignore_errors=True)  # ports and locks of the staging servers
        if target.exists():
            target.rmdir()  # empty (checked above)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _require_empty_data_dir(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise BackupError(f"{target} is not a directory")
    for pid_file in (target / "postgres" / "postmaster.pid", target / "redis" / "valkey.pid"):
        if pid_file.exists():
            raise BackupError(f"a server is running on {target} (stop `engram run` first), or it did not stop "
                              f"cleanly ({pid_file} exists)")
    if target.exists() and any(target.iterdir()):
        raise BackupError(f"{target} is not empty: restore into a new data directory (ENGRAM_DATA_DIR)")


def _restore_into(path: Path, settings: Settings) -> None:
    """pg_restore into the (empty) database, bring its schema up to date, load the kept Redis keys."""
    from services.db import make_engine
    from services.migrate import upgrade_head

    engine = make_engine(settings.database_url or "")
    connection = redis.Redis.from_url(settings.redis_url or "")
    try:
        with engine.connect() as db:
            tables = db.execute(text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).scalar_one()
        if tables:
            raise BackupError("the database is not empty: restore into a new, empty database")
        if connection.dbsize():
            raise BackupError("Redis is not empty: restore into a new, empty Redis (or database number)")
        with tempfile.TemporaryDirectory(prefix=".engram-restore-") as work, tarfile.open(path, "r") as archive:
            dump = Path(work) / DUMP
            with dump.open("wb") as out:
                shutil.copyfileobj(_member(archive, DUMP), out, 1 << 20)
            _run(pg_tool("pg_restore"), "--no-owner", "--single-transaction", "--exit-on-error",
                 f"--dbname={to_libpq_url(settings.database_url or '')}", str(dump))
            upgrade_head(engine)
            _load_redis_state(connection, (line for line in _member(archive, REDIS_STATE)))
    finally:
        connection.close()
        engine.dispose()


def _write_redis_state(connection: redis.Redis, out_path: Path) -> int:
    count = 0
    with out_path.open("w") as out:
        for prefix in KEPT_PREFIXES:
            for key in connection.scan_iter(match=prefix + "*", count=1000):
                entry = _dump_key(connection, key)
                if entry is not None:
                    out.write(json.dumps(entry, separators=(",", ":")) + "\n")
                    count += 1
    return count


def _dump_key(connection: redis.Redis, key: bytes) -> dict[str, Any] | None:
    kind = connection.type(key).decode()
    ttl_ms = connection.pttl(key)
    if kind == "string":
        value: Any = _b64(connection.get(key))
    elif kind == "hash":
        value = [[_b64(f), _b64(v)] for f, v in connection.hgetall(key).items()]
    elif kind == "list":
        value = [_b64(v) for v in connection.lrange(key, 0, -1)]
    elif kind == "set":
        value = [_b64(v) for v in connection.smembers(key)]
    elif kind == "zset":
        value = [[_b64(m), s] for m, s in connection.zrange(key, 0, -1, withscores=True)]
    elif kind == "stream":
        value = [[entry_id.decode(), [[_b64(f), _b64(v)] for f, v in fields.items()]]
                 for entry_id, fields in connection.xrange(key)]
    else:
        return None  # gone meanwhile ("none")
    return {"key": _b64(key), "type": kind, "ttl_ms": ttl_ms if ttl_ms and ttl_ms > 0 else None, "value": value}


def _load_redis_state(connection: redis.Redis, lines: Iterator[bytes]) -> None:
    pipe = connection.pipeline(transaction=False)
    for line in lines:
        entry = json.loads(line)
        key, kind, value = _unb64(entry["key"]), entry["type"], entry["value"]
        if kind == "string":
            pipe.set(key, _unb64(value))
        elif kind == "hash":
            pipe.hset(key, mapping={_unb64(f): _unb64(v) for f, v in value})
        elif kind == "list":
            pipe.rpush(key, *[_unb64(v) for v in value])
        elif kind == "set":
            pipe.sadd(key, *[_unb64(v) for v in value])
        elif kind == "zset":
            pipe.zadd(key, {_unb64(m): score for m, score in value})
        elif kind == "stream":
            for entry_id, fields in value:
                pipe.xadd(key, {_unb64(f): _unb64(v) for f, v in fields}, id=entry_id)
        if entry["ttl_ms"]:
            # The time left when the backup was taken: a seven-day log restored a day later has six left.
            pipe.pexpire(key, max(1, entry["ttl_ms"]))
        if len(pipe) >= 1000:
            pipe.execute()
    pipe.execute()


def _run(tool: Path, *args: str) -> None:
    try:
        subprocess.run([str(tool), *args], check=True, capture_output=True, text=True, cwd="/", timeout=TOOL_TIMEOUT_S)
    except subprocess.CalledProcessError as err:
        raise BackupError(f"{tool.name} failed ({err.returncode}): {(err.stderr or err.stdout).strip()}") from None


def _member(archive: tarfile.TarFile, name: str) -> Any:
    reader = archive.extractfile(name)
    if reader is None:
        raise BackupError(f"{name} in the backup is not a file")
    return reader


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return _sha256_of(handle)


def _sha256_of(reader: Any) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: reader.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def _b64(raw: bytes | None) -> str:
    return base64.b64encode(raw or b"").decode()


def _unb64(encoded: str) -> bytes:
    return base64.b64decode(encoded)
