"""A large person's own indexes: partial HNSW and full-text indexes of their rows only, built off the reply's path.

The vector arm searches a person with at most ``exact_lines`` turns exactly, over their own rows; a larger one through
an HNSW index. The shared index holds everyone's million vectors: its walk for a person with ~80k exchanges of a
million cost 62–88 ms of backend CPU a recall (6,345 buffers; bench/RESULTS.md), however few of the visited rows were
theirs. An index of their rows only (``CREATE INDEX … USING hnsw (embedding vector_cosine_ops) WHERE user_id = …``)
took the same statement to 1–3 ms. Their BM25 matches likewise: the turns' full-text index holds everyone's, so a
common word's posting list (20k of everyone's turns) was ANDed with a bitmap of their 170k turns, ~17 ms a statement;
a GIN index of their turns only gives their matches at once. The arms' statements need no change: they filter by
``t.user_id = :user`` and are planned for the bound value (``plan_cache_mode = force_custom_plan`` in
``search.SEARCH_SETTINGS_SQL``, also once psycopg has prepared them), so the planner proves an index's predicate and
prefers the smaller index.

Who gets one: a person with more than ``exact_lines`` turns (``exchange_line_counts``: recall searches them by
HNSW) and at least ``own_index_vectors`` exchanges with a vector. The vector backfill job (``workers.memory_chunker
.fill_vectors``) builds them once no vector waits, ``CONCURRENTLY`` (no write waits on them), and the
``vector_backfill`` periodic service queues that job while someone waits for theirs. Forgetting a person drops
theirs (``services.memory.forget``); the job also drops any whose person is gone (a forget that died between).

The record is the catalogue itself: an index's name is a function of its person's id (``index_name``), so whether a
person has one, its size and whether a build that died left it invalid are read from ``pg_index``, and nothing can
say one exists when it does not. The cost: the person's rows are in two indexes of each kind (the shared ones still
hold them), ~2 KB a vector and ~70 bytes a turn, and each new exchange of theirs is inserted into both.
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


@dataclass(frozen=True)
class Kind:
    """One kind of own index: its table, the start of its names and what it indexes."""

    name: str
    table: str
    prefix: str  # then 24 hex digits of md5(user_id): under PostgreSQL's 63 characters
    using: str
    bytes_per_row: int  # the build's memory: an HNSW graph that outgrows it is built on disk, several times slower


# The full-text index with the shared one's short pending list (migration 0012); a chat turn's merge cleans both
# (``vectors.merge_pending_lines``).
KINDS = (Kind("vectors", "exchanges", "ix_exchanges_vectors_of_", "hnsw (embedding vector_cosine_ops)", 2560),
         Kind("words", "exchange_lines", "ix_exchange_lines_words_of_",
              "gin (search) WITH (gin_pending_list_limit = 256)", 0))
VECTORS, WORDS = KINDS
_NAME_SQL = "'{prefix}' || left(md5({user}), 24)"  # index_name in SQL, of a user id expression
# One builder at a time across workers: two concurrent builds on one table wait for each other's lock anyway.
_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtext('engram.person_index'))"
_UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtext('engram.person_index'))"


@dataclass(frozen=True)
class Built:
    user_id: str
    index: str
    kind: str
    vectors: int  # the person's exchanges with a vector when it was built
    seconds: float
    size_bytes: int


def index_name(user_id: str, kind: Kind = VECTORS) -> str:
    """The name of ``user_id``'s own index of ``kind`` (the same as ``_NAME_SQL`` computes)."""
    return kind.prefix + hashlib.md5(user_id.encode("utf-8")).hexdigest()[:24]  # noqa: S324 — a name, not a secret


def _names_sql(user: str) -> str:
    return ", ".join(_NAME_SQL.format(prefix=kind.prefix, user=user) for kind in KINDS)


def wanted(session: Session | Connection, cfg: RecallConfig) -> list[tuple[str, int]]:
    """The people who should have their own indexes and lack a valid one, with their exchanges with a vector,
    largest first. One read of the per-person line counts, and an index count for each person past them."""
    if cfg.own_index_vectors <= 0:
        return []
    rows = session.execute(text(
        "SELECT c.user_id, v.vectors FROM exchange_line_counts c "
        "CROSS JOIN LATERAL (SELECT count(*) AS vectors FROM exchanges e "
        "  WHERE e.user_id = c.user_id AND e.embedding IS NOT NULL) v "
        "WHERE c.lines > :exact AND c.lines >= :least "
        "AND (SELECT count(*) FROM pg_class i JOIN pg_index x ON x.indexrelid = i.oid "
        f"  WHERE i.relname IN ({_names_sql('c.user_id')}) AND x.indisvalid) < {len(KINDS)} "
        "AND v.vectors >= :least ORDER BY v.vectors DESC, c.user_id"),
        {"exact": cfg.exact_lines, "least": cfg.own_index_vectors}).all()
    return [(row.user_id, int(row.vectors)) for row in rows]


def held(session: Session | Connection) -> dict[str, int]:
    """Every own index that exists, valid or not: its name and its size in bytes."""
    return {row.relname: int(row.size) for row in session.execute(text(
        "SELECT c.relname, pg_relation_size(c.oid) AS size FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid "
        f"WHERE {_owned_sql()} ORDER BY c.relname"))}


def _owned_sql() -> str:
    """Whether the index ``c`` (pg_class) is someone's own."""
    return "(" + " OR ".join(f"(x.indrelid = '{kind.table}'::regclass AND starts_with(c.relname, '{kind.prefix}'))"
                             for kind in KINDS) + ")"


def build_wanted(engine: Engine, cfg: RecallConfig, budget_s: float | None = None) -> list[Built]:
    """Build the wanted indexes, largest person first, until ``budget_s`` has passed (at least one person's are
    built); then drop those whose person is gone. Returns what was built; none while another worker builds (it holds
    the lock). Idempotent: a valid index is kept, an invalid one (a build that died) is dropped and built again."""
    started, built = time.monotonic(), []
    with _autocommit(engine) as connection:
        if not connection.scalar(text(_LOCK_SQL)):
            return []
        try:
            for user_id, vectors in wanted(connection, cfg):
                if built and budget_s is not None and time.monotonic() - started >= budget_s:
                    break
                built += [_build(connection, user_id, kind, vectors) for kind in KINDS
                          if not _valid(connection, index_name(user_id, kind))]
            drop_orphans(connection, cfg)
        finally:
            connection.execute(text(_UNLOCK_SQL))
    return built


def _valid(connection: Connection, name: str) -> bool:
    return bool(connection.scalar(text("SELECT x.indisvalid FROM pg_index x WHERE x.indexrelid = to_regclass(:name)"),
                                  {"name": name}))


def _build(connection: Connection, user_id: str, kind: Kind, vectors: int) -> Built:
    name = index_name(user_id, kind)
    connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))  # an invalid one, left by a dead build
    memory = min(1024, max(64, vectors * kind.bytes_per_row // 2**20 + 1))  # at least PostgreSQL's default, ≤ 1 GB
    connection.execute(text("SELECT set_config('maintenance_work_mem', :memory, false)"), {"memory": f"{memory}MB"})
    # format(%L) quotes the person's id as a literal: the predicate the planner matches against the bound user_id.
    ddl = connection.scalar(text(
        f"SELECT format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON {kind.table} USING {kind.using} "
        "WHERE user_id = %L', CAST(:name AS text), CAST(:user AS text))"), {"name": name, "user": user_id})
    started = time.monotonic()
    try:
        connection.execute(text(ddl))
    finally:
        connection.execute(text("RESET maintenance_work_mem"))
    seconds = time.monotonic() - started
    size = int(connection.scalar(text("SELECT pg_relation_size(to_regclass(:name))"), {"name": name}) or 0)
    logger.info("own %s index of %s: %d vectors in %.1f s, %d bytes", kind.name, user_id, vectors, seconds, size,
                extra={"user_id": user_id, "index": name, "vectors": vectors, "seconds": round(seconds, 2)})
    return Built(user_id, name, kind.name, vectors, seconds, size)


def drop(engine: Engine, user_id: str) -> bool:
    """Drop ``user_id``'s own indexes, if any (``CONCURRENTLY``: recalls and writes of others go on). Returns
    whether there was one."""
    with _autocommit(engine) as connection:
        return any([_drop(connection, index_name(user_id, kind)) for kind in KINDS])


def drop_orphans(connection: Connection, cfg: RecallConfig) -> list[str]:
    """Drop the own indexes whose person no longer exists (all of them when ``own_index_vectors`` is 0: none is
    wanted). ``connection`` in autocommit."""
    gone = f" AND NOT EXISTS (SELECT 1 FROM users u WHERE c.relname IN ({_names_sql('u.id')}))"
    names = connection.scalars(text(
        "SELECT c.relname FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid "
        f"WHERE {_owned_sql()}{gone if cfg.own_index_vectors > 0 else ''}")).all()
    return [name for name in names if _drop(connection, name)]


def _drop(connection: Connection, name: str) -> bool:
    exists = connection.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": name})
    if exists:
        connection.execute(text(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"'))
        logger.info("own index %s dropped", name, extra={"index": name})
    return bool(exists)


@contextmanager
def _autocommit(engine: Engine) -> Iterator[Connection]:
    """A connection of ``engine`` in autocommit: ``CREATE``/``DROP INDEX CONCURRENTLY`` cannot run in a
    transaction block."""
    with engine.connect() as connection:
        yield connection.execution_options(isolation_level="AUTOCOMMIT")
