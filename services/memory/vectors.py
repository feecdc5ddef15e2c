"""Vectors that follow an import: the backfill of exchanges stored without one.

``engram import`` stores exchanges, their lines and the full-text data at once and computes no
vector (embedding was nine tenths of an import's time), so the words are searchable as soon as
the command returns. This module fills the vectors in afterwards, exactly as the inline import
computes them (``speakers.embed_records``: an exchange of named speakers gets its lines' vectors
and their mean, any other exchange the vector of its joined text), so recall is the same once
they are in; until then such an exchange simply has no vector signal.

``fill_batch`` claims the oldest exchanges without a vector (any user) with an advisory lock per
exchange, held by its transaction while the model runs: several workers share the work and never
embed one row twice, yet nothing that deletes or updates the rows waits for the model (when the
claim was a row lock, a person's "forget everything" waited for the batch: 36 s at load 8). The
rows themselves are locked only briefly, to read them (a chat turn's derived lines are committed
before the model runs) and to write the vectors, only to rows that still exist and still wait: a
row a delete holds is skipped, never waited for, and a person being forgotten (their purge holds
``FORGETTING``) is left alone, so nothing forgotten comes back. A crash rolls the batch's vectors
back and the next run takes it again. The RQ job (``workers.memory_chunker.fill_vectors``)
runs batches for a while and queues its own continuation while rows remain; its two fixed job
ids (alternating) keep it from ever being queued twice. The importer queues it after storing,
and the ``vector_backfill`` periodic service queues it whenever rows wait (Redis was down
during an import, a worker died: RQ failed the dead run, whose id, queued again, leaves the failed
registry: ``services.queues.replace_failed``).

An exchange the model cannot embed (``EmbeddingError`` on its text alone, twice) would otherwise
fail its whole batch on every run for ever: a failed batch is split in halves until the culprit
stands alone, the others get their vectors, and the culprit is marked ``unembeddable`` (its
``embedding_model``). It stays searchable by its words, is no longer pending, and is counted apart
on the ops page and in ``/metrics``; clearing the mark queues it again.

A chat turn is stored lean (``embedding_model = 'deferred'``, migration 0015): no vector and no
lines on the reply's path. Claiming such a row derives its lines first (the derivation migration
0007's trigger does for any other row), so the chunker job that follows the turn, or this backfill
if that job never ran, completes lines and vector in one transaction.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import redis
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from services.db import vector_text
from services.embeddings import Embedder
from services.errors import EmbeddingError
from services.memory import person_index, speakers
from services.queues import MEMORY_CHUNKER_QUEUE, enqueue, job_active, memory_job_options

logger = logging.getLogger(__name__)

BACKFILL_JOB = "workers.memory_chunker.fill_vectors"
BACKFILL_JOB_IDS = ("vectors-backfill-0", "vectors-backfill-1")  # a running job queues the other id
BATCH = 256  # exchanges per transaction: the import's batch, so the model sees the same batches
UNEMBEDDABLE = "unembeddable"  # the embedding_model of an exchange the model failed on alone, twice
DEFERRED = "deferred"  # the embedding_model of a chat turn stored without its lines and vector (digest.store)
_WAITING = f"embedding IS NULL AND embedding_model IS DISTINCT FROM '{UNEMBEDDABLE}'"
# The claim of exchange ``c.id``: a transaction-scoped advisory lock in the two-key space (apart from the single-key
# locks of migrations, facts, thread positions and person indexes), keyed by the id's 32 low bits.
_TRY_CLAIM = ("pg_try_advisory_xact_lock(hashtext('engram.vectors'), "
              "CAST(mod(c.id, 4294967296) - 2147483648 AS integer))")
# A person being forgotten: their purge holds this lock for its transaction (services/memory/forget.py). The
# backfill's reads and writes take it shared, without waiting, and leave alone the rows of a person they cannot:
# neither then waits for row locks the other holds (a purge deletes lines, their counts and their threads'
# positions before the exchanges; a wait on either side, other rows held, could deadlock).
FORGETTING = "hashtext('engram.forgetting'), hashtext({user})"
_NOT_FORGOTTEN = f"pg_try_advisory_xact_lock_shared({FORGETTING.format(user='user_id')})"


@dataclass
class PendingLine:
    line_id: int
    speaker: str
    text: str


@dataclass
class PendingExchange:
    key: int  # the exchange's id
    text: str  # user_text and reply joined, as the importer embeds them
    lines: list[PendingLine] = field(default_factory=list)


def pending_count(session: Session | Connection) -> int:
    """Exchanges still waiting for a vector, of every user (the partial index of migration 0011)."""
    return int(session.scalar(text(f"SELECT count(*) FROM exchanges WHERE {_WAITING}")) or 0)


def unembeddable_count(session: Session | Connection) -> int:
    """Exchanges the model failed on: left without a vector, searchable by their words only."""
    return int(session.scalar(text("SELECT count(*) FROM exchanges WHERE embedding IS NULL AND embedding_model = "
                                   f"'{UNEMBEDDABLE}'")) or 0)


def fill_batch(sessions: sessionmaker[Session], embedder: Embedder, limit: int = BATCH,
               after: int = 0) -> tuple[int, int]:
    """Embed and store the vectors of up to ``limit`` exchanges without one, of ids above ``after``; returns how
    many left the wait (embedded, or marked unembeddable) and the last id claimed (0: none left that no other
    worker holds). Fewer may leave than were claimed: rows deleted while the model ran."""
    with sessions.begin() as session:  # holds the claim, not the rows, while the model runs; then writes
        claimed = _claim(session, limit, reader=sessions, after=after)
        if not claimed:
            return 0, 0
        last = claimed[-1].key
        try:
            vectors = speakers.embed_records(embedder, claimed, lambda item: item.text)
        except EmbeddingError:
            logger.warning("vector backfill: a batch of %d failed to embed; looking for the culprit", len(claimed),
                           exc_info=True)
        else:
            return _store(session, claimed, vectors, embedder.model_id), last
    # The claim has ended (its reads committed at most deferred rows' lines): the halves are claimed again.
    return _fill_apart(sessions, embedder, [item.key for item in claimed]), last


def _fill_apart(sessions: sessionmaker[Session], embedder: Embedder, ids: list[int], tries_alone: int = 2) -> int:
    """Fill ``ids`` in halves until a failing exchange stands alone; it is marked unembeddable after
    ``tries_alone`` failures (a passing fault of the model does not condemn a row). Returns the exchanges taken
    off the wait (filled or marked)."""
    with sessions.begin() as session:
        claimed = _claim(session, len(ids), ids, reader=sessions)
        if not claimed:
            return 0  # another worker holds or filled them, or they are gone
        try:
            vectors = speakers.embed_records(embedder, claimed, lambda item: item.text)
        except EmbeddingError as exc:
            if len(claimed) == 1 and tries_alone <= 1:
                return _mark_unembeddable(session, claimed[0].key, exc)
        else:
            return _store(session, claimed, vectors, embedder.model_id)
    keys = [item.key for item in claimed]
    if len(keys) == 1:
        return _fill_apart(sessions, embedder, keys, tries_alone - 1)
    middle = len(keys) // 2
    return _fill_apart(sessions, embedder, keys[:middle]) + _fill_apart(sessions, embedder, keys[middle:])


def _mark_unembeddable(session: Session, exchange_id: int, exc: Exception) -> int:
    # The transaction holds no row (the claim is an advisory lock): waiting here for a delete cannot deadlock.
    marked = session.execute(text(
        f"UPDATE exchanges SET embedding_model = :mark WHERE id = :id AND {_WAITING} AND {_NOT_FORGOTTEN}"),
        {"mark": UNEMBEDDABLE, "id": exchange_id}).rowcount
    if not marked:
        return 0  # deleted while the model ran, or being deleted
    logger.error("vector backfill: exchange %d cannot be embedded (%s); it stays searchable by its words",
                 exchange_id, exc, extra={"exchange_id": exchange_id})
    return 1


def fill_all(sessions: sessionmaker[Session], embedder: Embedder, *, limit: int = BATCH,
             budget_s: float | None = None, loops: int = 1) -> int:
    """Run batches until nothing is left (or, after the first, ``budget_s`` seconds have passed); returns
    exchanges embedded.

    ``loops`` > 1: that many claim-embed-store loops at once, each on its own thread and connection, so one
    embeds while another's batch is written (two loops on two cores: as fast as the inline import, which
    embedded the next batch while storing this one).
    """
    if loops > 1:
        with ThreadPoolExecutor(max_workers=loops, thread_name_prefix="vectors") as runner:
            futures = [runner.submit(fill_all, sessions, embedder, limit=limit, budget_s=budget_s)
                       for _ in range(loops)]
            return sum(future.result() for future in futures)
    # Onwards from the last batch: a batch forgotten while the model ran goes on to the next rows, and a row left
    # out (held by a delete) is not embedded again in this run; the job's continuation finds it if it stays.
    started, done, after = time.monotonic(), 0, 0
    while True:
        filled, after = fill_batch(sessions, embedder, limit, after)
        done += filled
        if not after or (budget_s is not None and time.monotonic() - started >= budget_s):
            return done


def fill_exchange(session: Session, embedder: Embedder, exchange_id: int) -> bool:
    """Fill one exchange's vectors now if it has none (the chunker enriching an imported exchange); in the
    caller's transaction. False: it has one, or another worker is filling it."""
    claimed = _claim(session, 1, [exchange_id])
    if not claimed:
        return False
    vectors = speakers.embed_records(embedder, claimed, lambda item: item.text)
    return bool(_store(session, claimed, vectors, embedder.model_id))


def _claim(session: Session, limit: int, ids: list[int] | None = None,
           reader: sessionmaker[Session] | None = None, after: int = 0) -> list[PendingExchange]:
    """Claim up to ``limit`` waiting exchanges (of ``ids``; above ``after``), oldest first, for ``session``'s
    transaction, and read them. The claim is an advisory lock per exchange, not a row lock: other workers skip the
    exchange, while a delete or an update of its row does not wait for the claim to end. ``reader``: read in a short
    transaction of its own, committed before the model runs (a chat turn's derived lines lock their exchange's key
    until their transaction ends); None: in ``session``'s (the chunker's single exchange)."""
    only = "AND id = ANY(:ids) " if ids is not None else ""
    while True:
        candidates = list(session.scalars(text(
            f"SELECT id FROM exchanges WHERE {_WAITING} {only}AND id > :after ORDER BY id LIMIT :limit"),
            {"limit": limit, "ids": ids, "after": after}))
        if not candidates:
            return []
        # Over an array, not under the LIMIT: each candidate is tried once, so no lock is taken and left unused.
        mine = list(session.scalars(text(
            f"SELECT c.id FROM unnest(CAST(:ids AS bigint[])) AS c(id) WHERE {_TRY_CLAIM}"), {"ids": candidates}))
        if mine:
            if reader is None:
                claimed = _read(session, mine)
            else:
                with reader.begin() as short:
                    claimed = _read(short, mine)
            if claimed:
                return claimed
        if len(candidates) < limit:
            return []
        after = candidates[-1]  # all held by other workers, filled since or being forgotten: the next ones


def _read(session: Session, ids: list[int]) -> list[PendingExchange]:
    """The claimed exchanges that still wait, with their lines (a chat turn's derived first)."""
    # SKIP LOCKED: a row being deleted is not waited for; one held for another reason waits for a later batch. A
    # person being forgotten is not read at all (their rows would be embedded for nothing).
    rows = session.execute(text(
        f"SELECT id, user_text, reply, embedding_model FROM exchanges WHERE {_WAITING} AND id = ANY(:ids) "
        f"AND {_NOT_FORGOTTEN} ORDER BY id FOR NO KEY UPDATE SKIP LOCKED"), {"ids": ids}).all()
    claimed = {int(row.id): PendingExchange(int(row.id), f"{row.user_text}\n{row.reply}".strip()) for row in rows}
    if not claimed:
        return []
    deferred = [int(row.id) for row in rows if row.embedding_model == DEFERRED]
    if deferred:  # claimed and locked: no other worker derives them, no delete removes them meanwhile
        derive_lines(session, deferred)
    for line in session.execute(text(
            "SELECT id, exchange_id, speaker, text FROM exchange_lines WHERE exchange_id = ANY(:ids) "
            "ORDER BY exchange_id, position, id"), {"ids": list(claimed)}):
        claimed[int(line.exchange_id)].lines.append(PendingLine(int(line.id), line.speaker, line.text))
    return list(claimed.values())


# The turns' full-text index: new lines' lexemes wait in its pending list (migration 0012: up to 256 kB, ~1,000
# lines), which every search by a word reads whole.
LINES_SEARCH_INDEX = "ix_exchange_lines_search"


def merge_pending_lines(engine: Engine, user_id: str | None = None) -> None:
    """Merge the turns' full-text pending list into the index proper, after a chat turn's lines are in (and that of
    ``user_id``'s own full-text index, when they have one: ``person_index``).

    A chatting person's turns arrive a few at a time, so the list filled between merges (autovacuum's or a
    full list's) and every recall meanwhile scanned up to ~1,000 pending lines per searched word: at 100k
    exchanges ~1.0–1.6 ms more PostgreSQL CPU a recall with ~1,200 lines pending (bench/recall_rounds.md, rlive).
    Merging a turn's two lines costs the worker ~2 ms, off the reply's and the recall's path. Needs the index's
    owner (the role that migrated); without that right the list waits for autovacuum as before."""
    try:
        with engine.connect() as connection:
            # to_regclass: NULL for a person without their own index, which the strict function then skips.
            own = person_index.index_name(user_id, person_index.WORDS) if user_id else None
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text(
                "SELECT gin_clean_pending_list(CAST(:index AS regclass)), "
                "gin_clean_pending_list(to_regclass(CAST(:own AS text)))"), {"index": LINES_SEARCH_INDEX, "own": own})
    except DBAPIError as exc:
        logger.debug("the turns' pending full-text entries wait for autovacuum: %s", exc)


def derive_lines(session: Session | Connection, exchange_ids: list[int]) -> int:
    """The lines of chat turns stored lean: the person's message and the reply, as migration 0007's trigger
    derives them for any other exchange; an exchange that has lines already is left alone. Returns lines added."""
    return session.execute(DERIVE_LINES, {"ids": exchange_ids}).rowcount


# Migration 0007's derivation (its ``DERIVED_LINES``) for the given exchanges.
DERIVE_LINES = text("""
    INSERT INTO exchange_lines (user_id, exchange_id, thread_id, position, speaker, text, external_id, occurred_at)
    SELECT e.user_id, e.id, e.thread_id, p.pos, p.speaker, p.body,
           CASE WHEN p.pos = (CASE WHEN coalesce(e.user_text, '') <> '' THEN 0 ELSE 1 END) THEN e.external_id END,
           coalesce(e.occurred_at, e.created_at) + p.pos * interval '1 millisecond'
    FROM exchanges e
    CROSS JOIN LATERAL (VALUES (0, 'user', e.user_text), (1, 'assistant', e.reply)) p(pos, speaker, body)
    WHERE e.id = ANY(CAST(:ids AS bigint[])) AND coalesce(p.body, '') <> ''
      AND NOT EXISTS (SELECT 1 FROM exchange_lines l WHERE l.exchange_id = e.id)
    ORDER BY e.id, p.pos
""")


def _store(session: Session, claimed: list[PendingExchange], vectors: dict[Any, Any], model_id: str) -> int:
    """The vectors of both tables, one statement each (ids and vectors as arrays: one round trip per table), of the
    claimed exchanges that still wait; returns how many were written.

    The model ran without a row lock: an exchange may have been deleted meanwhile, or be being deleted now. Only
    rows this transaction locks without waiting, of people not being forgotten, are written: a wait here, other
    rows held, could deadlock with a delete. An exchange is written whole or not at all (a line of it missing or
    held: not at all); one left out that survives waits for the next batch."""
    held = set(session.scalars(text(
        f"SELECT id FROM exchanges WHERE id = ANY(:ids) AND {_WAITING} AND {_NOT_FORGOTTEN} "
        "FOR NO KEY UPDATE SKIP LOCKED"), {"ids": [item.key for item in claimed]}))
    by_exchange = {item.key: [(item.lines[position].line_id, vector)
                              for position, vector in vectors[item.key][1].items()]
                   for item in claimed if item.key in held}
    wanted = [line_id for pairs in by_exchange.values() for line_id, _ in pairs]
    if wanted:
        locked = set(session.scalars(text(
            "SELECT id FROM exchange_lines WHERE id = ANY(:ids) FOR NO KEY UPDATE SKIP LOCKED"), {"ids": wanted}))
        held -= {key for key, pairs in by_exchange.items() if any(line_id not in locked for line_id, _ in pairs)}
    kept = [item for item in claimed if item.key in held]
    if not kept:
        return 0
    session.execute(text(
        "UPDATE exchanges e SET embedding = v.embedding, embedding_model = :model "
        "FROM unnest(CAST(:ids AS bigint[]), CAST(CAST(:vectors AS text[]) AS vector[])) AS v(id, embedding) "
        "WHERE e.id = v.id"),
        {"ids": [item.key for item in kept], "model": model_id,
         "vectors": [vector_text(vectors[item.key][0]) for item in kept]})
    lines = [pair for item in kept for pair in by_exchange[item.key]]
    if lines:
        session.execute(text(
            "UPDATE exchange_lines l SET embedding = v.embedding "
            "FROM unnest(CAST(:ids AS bigint[]), CAST(CAST(:vectors AS text[]) AS vector[])) AS v(id, embedding) "
            "WHERE l.id = v.id"),
            {"ids": [line_id for line_id, _ in lines], "vectors": [vector_text(v) for _, v in lines]})
    return len(kept)


def enqueue_backfill(connection: redis.Redis, *, continuing: str | None = None) -> str | None:
    """Queue the backfill job unless it is queued or running already; returns its id (None: not queued).

    ``continuing``: the id of the running job queueing its own continuation (it is started, not done).
    """
    others = [job_id for job_id in BACKFILL_JOB_IDS if job_id != continuing]
    # enqueue() itself skips others[0] when it is active; the other id (if any) is checked here.
    if any(job_active(connection, job_id) for job_id in others[1:]):
        return None
    return enqueue(connection, MEMORY_CHUNKER_QUEUE, BACKFILL_JOB, job_id=others[0], description="vector backfill",
                   **memory_job_options())


def try_enqueue_backfill(connection: redis.Redis | None) -> bool:
    """``enqueue_backfill`` where Redis may be down; True when a backfill job is queued or running now (False:
    the ``vector_backfill`` periodic service will queue it)."""
    if connection is None:
        return False
    try:
        enqueue_backfill(connection)
    except redis.RedisError as exc:
        logger.warning("vector backfill not queued (%s): the vector_backfill service will queue it", exc)
        return False
    return True
