"""A large person's own vector index: a partial HNSW index of their exchanges, built off the reply's path.

The vector arm searches a person with at most ``exact_lines`` turns exactly, over their own rows; a larger one through
an HNSW index. The shared index holds everyone's million vectors: its walk for a person with ~80k exchanges of a
million cost 62–88 ms of backend CPU a recall (6,345 buffers; bench/RESULTS.md), however few of the visited rows were
theirs. An index of their rows only (``CREATE INDEX … USING hnsw (embedding vector_cosine_ops) WHERE user_id = …``)
took the same statement to 3.1 ms. The arm's statement needs no change: it filters by ``t.user_id = :user`` and is
planned for the bound value (``plan_cache_mode = force_custom_plan`` in ``search.SEARCH_SETTINGS_SQL``, also once
psycopg has prepared it), so the planner proves the index's predicate and prefers the smaller index.

Who gets one: a person with more than ``exact_lines`` turns (``exchange_line_counts``: recall searches them by
HNSW) and at least ``own_index_vectors`` exchanges with a vector. The vector backfill job (``workers.memory_chunker
.fill_vectors``) builds them once no vector waits, ``CONCURRENTLY`` (no write waits on it), and the
``vector_backfill`` periodic service queues that job while someone waits for theirs. Forgetting a person drops
theirs (``services.memory.forget``); the job also drops any whose person is gone (a forget that died between).

The record is the catalogue itself: an index's name is a function of its person's id (``index_name``), so whether a
person has one, its size and whether a build that died left it invalid are read from ``pg_index``, and nothing can
say one exists when it does not. The cost: the person's vectors are in two HNSW indexes (the shared one still holds
them), ~2 KB a row, and each new exchange of theirs is inserted into both.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text
from sqlalchemy.orm import Session

from services.memory.config import RecallConfig

logger = logging.getLogger(__name__)

PREFIX = "ix_exchanges_vectors_of_"  # then 24 hex digits of md5(user_id): 48 characters, under PostgreSQL's 63
_NAME_SQL = f"'{PREFIX}' || left(md5({{user}}), 24)"  # index_name in SQL, of a user id expression
# One builder at a time across workers: two concurrent builds on one table wait for each other's lock anyway.
_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtext('engram.person_index'))"
_UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtext('engram.person_index'))"
# The build's working memory: an HNSW build whose graph outgrows it goes on on disk, several times slower. ~2.5 KB
# a vector of 384 dimensions with its neighbours; at least PostgreSQL's default, at most 1 GB.
_BYTES_PER_VECTOR = 2560


@dataclass(frozen=True)
class Built:
    user_id: str
    index: str
    vectors: int
    seconds: float
    size_bytes: int


def index_name(user_id: str) -> str:
    """The name of ``user_id``'s own vector index (the same as ``_NAME_SQL`` computes)."""
    return PREFIX + hashlib.md5(user_id.encode("utf-8")).hexdigest()[:24]  # noqa: S324 — a name, not a secret


def wanted(session: Session | Connection, cfg: RecallConfig) -> list[tuple[str, int]]:
    """The people who should have their own index and have no valid one, with their exchanges with a vector,
    largest first. One read of the per-person line counts, and an index count for each person past them."""
    if cfg.own_index_vectors <= 0:
        return []
    rows = session.execute(text(
        "SELECT c.user_id, v.vectors FROM exchange_line_counts c "
        "CROSS JOIN LATERAL (SELECT count(*) AS vectors FROM exchanges e "
        "  WHERE e.user_id = c.user_id AND e.embedding IS NOT NULL) v "
        "WHERE c.lines > :exact AND c.lines >= :least "
        "AND NOT EXISTS (SELECT 1 FROM pg_class i JOIN pg_index x ON x.indexrelid = i.oid "
        f"  WHERE i.relname = {_NAME_SQL.format(user='c.user_id')} AND x.indisvalid) "
        "AND v.vectors >= :least ORDER BY v.vectors DESC, c.user_id"),
        {"exact": cfg.exact_lines, "least": cfg.own_index_vectors}).all()
    return [(row.user_id, int(row.vectors)) for row in rows]


def held(session: Session | Connection) -> dict[str, int]:
    """Every person's own vector index that exists, valid or not: its name and its size in bytes."""
    return {row.relname: int(row.size) for row in session.execute(text(
        "SELECT c.relname, pg_relation_size(c.oid) AS size FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid "
        "WHERE x.indrelid = 'exchanges'::regclass AND starts_with(c.relname, :prefix) ORDER BY c.relname"),
        {"prefix": PREFIX})}


def build_wanted(engine: Engine, cfg: RecallConfig, budget_s: float | None = None) -> list[Built]:
    """Build the wanted indexes, largest person first, until ``budget_s`` has passed (at least one is built); then
    drop those whose person is gone. Returns what was built; none while another worker builds (it holds the lock).
    Idempotent: a person with a valid index is not wanted, an invalid one (a build that died) is dropped and built
    again."""
    started, built = time.monotonic(), []
    with _autocommit(engine) as connection:
        if not connection.scalar(text(_LOCK_SQL)):
            return []
        try:
            for user_id, vectors in wanted(connection, cfg):
                if built and budget_s is not None and time.monotonic() - started >= budget_s:
                    break
                built.append(_build(connection, user_id, vectors))
            drop_orphans(connection, cfg)
        finally:
            connection.execute(text(_UNLOCK_SQL))
    return built


def _build(connection: Connection, user_id: str, vectors: int) -> Built:
    name = index_name(user_id)
    connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))  # an invalid one, left by a dead build
    memory = min(1024, max(64, vectors * _BYTES_PER_VECTOR // 2**20 + 1))
    connection.execute(text("SELECT set_config('maintenance_work_mem', :memory, false)"), {"memory": f"{memory}MB"})
    # format(%L) quotes the person's id as a literal: the predicate the planner matches against the bound user_id.
    ddl = connection.scalar(text(
        "SELECT format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON exchanges USING hnsw (embedding "
        "vector_cosine_ops) WHERE user_id = %L', CAST(:name AS text), CAST(:user AS text))"),
        {"name": name, "user": user_id})
    started = time.monotonic()
    try:
        connection.execute(text(ddl))
    finally:
        connection.execute(text("RESET maintenance_work_mem"))
    seconds = time.monotonic() - started
    size = int(connection.scalar(text("SELECT pg_relation_size(to_regclass(:name))"), {"name": name}) or 0)
    logger.info("own vector index of %s: %d vectors in %.1f s, %d bytes", user_id, vectors, seconds, size,
                extra={"user_id": user_id, "index": name, "vectors": vectors, "seconds": round(seconds, 2)})
    return Built(user_id, name, vectors, seconds, size)


def drop(engine: Engine, user_id: str) -> bool:
    """Drop ``user_id``'s own vector index, if any (``CONCURRENTLY``: recalls and writes of others go on).
    Returns whether there was one."""
    with _autocommit(engine) as connection:
        return _drop(connection, index_name(user_id))


def drop_orphans(connection: Connection, cfg: RecallConfig) -> list[str]:
    """Drop the own indexes whose person no longer exists (all of them when ``own_index_vectors`` is 0: none is
    wanted). ``connection`` in autocommit."""
    gone = f" AND NOT EXISTS (SELECT 1 FROM users u WHERE {_NAME_SQL.format(user='u.id')} = c.relname)"
    keep = gone if cfg.own_index_vectors > 0 else ""
    names = connection.scalars(text(
        "SELECT c.relname FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid "
        f"WHERE x.indrelid = 'exchanges'::regclass AND starts_with(c.relname, :prefix){keep}"),
        {"prefix": PREFIX}).all()
    return [name for name in names if _drop(connection, name)]


def _drop(connection: Connection, name: str) -> bool:
    exists = connection.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": name})
    if exists:
        connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))
        logger.info("own vector index %s dropped", name, extra={"index": name})
    return bool(exists)


@contextmanager
def _autocommit(engine: Engine) -> Iterator[Connection]:
    """A connection of ``engine`` in autocommit: ``CREATE``/``DROP INDEX CONCURRENTLY`` cannot run in a
    transaction block."""
    with engine.connect() as connection:
        yield connection.execution_options(isolation_level="AUTOCOMMIT")
