"""Import past conversations through the real storage and indexing path.

The file's lines are parsed and grouped into exchanges by ``services.memory.import_lines``. Each
session becomes a thread and a closed conversation session.

An exchange's key is the external_id of its first line, else a hash of session, speaker, text
and timestamp; it is stored as the exchange's ``external_id``. Keys already stored are skipped
before anything is embedded, so a re-run stores nothing twice and an interrupted run resumes
where it stopped.

By default a batch's exchanges, lines, threads and sessions are written in one transaction with no
vector (words searchable at once); the backfill (services/memory/vectors.py) computes the same vectors
afterwards. ``embed=True`` (``engram import --embed-now``) embeds each batch before storing it.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import redis
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from services.db import ConversationSession, Exchange, Thread, User, insert, vector_text
from services.embeddings import Embedder
from services.jobs import enqueue_jobs
from services.memory import speakers
from services.memory.import_lines import (
    BadLine,
    LineRecord,
    Record,
    digest,
    pair_exchanges,
    parse_lines,
)
from services.memory.models import ExchangeLine
from services.queues import (
    CHUNK_JOB_ID,
    CHUNKER_JOB,
    EPISODE_JOB,
    EPISODIC_QUEUE,
    MEMORY_CHUNKER_QUEUE,
)

# The file format lives in import_lines; its names stay importable from here, where callers look.
__all__ = ["BadLine", "ImportReport", "LineRecord", "Record", "digest", "pair_exchanges", "parse_lines",
           "session_id_for", "store_records", "thread_id_for"]


@dataclass
class ImportReport:
    lines: int = 0
    bad: list[BadLine] = field(default_factory=list)
    exchanges: int = 0
    stored: int = 0
    skipped: int = 0
    sessions: int = 0
    chunk_jobs: int = 0
    episode_jobs: int = 0
    ids_by_key: dict[str, int] = field(default_factory=dict)
    owned: dict[str, int] = field(default_factory=dict)  # lists, reminders, goals added from a bundle

    def summary(self) -> dict[str, Any]:
        return {"lines": self.lines, "bad_lines": len(self.bad), "exchanges": self.exchanges, "stored": self.stored,
                "already_stored": self.skipped, "sessions": self.sessions, "chunk_jobs": self.chunk_jobs,
                "episode_jobs": self.episode_jobs, **({"added": self.owned} if self.owned else {})}


def thread_id_for(user_id: str, thread_key: str) -> str:
    return "imp-" + digest(user_id, "thread", thread_key)


def session_id_for(user_id: str, session_key: str) -> str:
    return "ims-" + digest(user_id, "session", session_key)


def store_records(sessions: sessionmaker[Session], embedder: Embedder, user_id: str, records: list[Record], *,
                  batch_size: int = 256, progress: Callable[[int], None] | None = None,
                  connection: redis.Redis | None = None, report: ImportReport | None = None,
                  embed_threads: int | None = None, embed: bool = False) -> ImportReport:
    """Store exchanges with their lines, threads and sessions; enqueue enrichment if connected.

    Args:
        connection: Redis for chunker and episode jobs; None → no enrichment (``--no-enrich``).
        embed: compute the vectors now (in batches, before this returns); False → store them without
            one: the backfill (services/memory/vectors.py) computes the same vectors afterwards.
        embed_threads: threads embedding at once; None → one per CPU core (embedding is most of an import).
    """
    report = report or ImportReport()
    report.exchanges += len(records)
    touched: set[str] = set()
    with sessions.begin() as session:
        session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
    batches = [records[start : start + batch_size] for start in range(0, len(records), batch_size)]
    if not embed:
        for batch in batches:
            inserted = _store_batch(sessions, None, user_id, batch, report, {})
            _after_batch(batch, inserted, touched, user_id, connection, report, progress)
        return _after_import(touched, user_id, connection, report)
    # Embedding (the model, in this process) and storing (PostgreSQL, another process) overlap: the next
    # batch is embedded while this one is written, on every core (both backends release the GIL).
    threads = max(1, embed_threads or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-next") as pool, \
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="import-embed") as embed_pool:
        def embed(batch: list[Record]) -> Future[dict[str, Any]]:
            return pool.submit(_embed_new, sessions, embedder, user_id, batch, embed_pool if threads > 1 else None)

        pending = embed(batches[0]) if batches else None
        for index, batch in enumerate(batches):
            vectors = pending.result() if pending is not None else {}
            pending = embed(batches[index + 1]) if index + 1 < len(batches) else None
            inserted = _store_batch(sessions, embedder, user_id, batch, report, vectors)
            _after_batch(batch, inserted, touched, user_id, connection, report, progress)
    return _after_import(touched, user_id, connection, report)


def _after_import(touched: set[str], user_id: str, connection: redis.Redis | None,
                  report: ImportReport) -> ImportReport:
    report.sessions += len(touched)
    if connection is not None and touched:
        jobs = [(sid, f"episode-{sid}") for sid in sorted(session_id_for(user_id, key) for key in touched)]
        report.episode_jobs += enqueue_jobs(connection, EPISODIC_QUEUE, EPISODE_JOB, jobs, user_id)
    return report


def _after_batch(batch: list[Record], inserted: dict[str, int], touched: set[str], user_id: str,
                 connection: redis.Redis | None, report: ImportReport, progress: Callable[[int], None] | None) -> None:
    touched.update(record.session_key for record in batch if record.key in inserted)
    if connection is not None and inserted:
        report.chunk_jobs += enqueue_jobs(connection, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB,
                                          [(i, CHUNK_JOB_ID % i) for i in inserted.values()], user_id)
    if progress is not None:
        progress(len(batch))


def _exchange_text(record: Record) -> str:
    return f"{record.user_text}\n{record.reply}".strip()


def _embed_new(sessions: sessionmaker[Session], embedder: Embedder, user_id: str, batch: list[Record],
               pool: Executor | None = None) -> dict[str, Any]:
    """Vectors of the batch's records not stored yet (a re-import embeds nothing), by key: the exchange's and,
    by line position, its named speakers' lines' (``speakers.embed_records``)."""
    with sessions() as session:
        existing = _existing(session, user_id, batch)
    fresh = [record for record in batch if record.key not in existing]
    if not fresh:
        return {}
    return speakers.embed_records(embedder, fresh, _exchange_text, pool)


def _store_batch(sessions: sessionmaker[Session], embedder: Embedder | None, user_id: str, batch: list[Record],
                 report: ImportReport, embedded: dict[str, Any]) -> dict[str, int]:
    """Insert the batch's new exchanges in one transaction (vectors from ``embedded``, the missing ones computed;
    ``embedder`` None: none, the backfill's job); returns key → id of those inserted."""
    with sessions.begin() as session:
        existing = _existing(session, user_id, batch)
        report.ids_by_key.update(existing)
        fresh = [record for record in batch if record.key not in existing]
        report.skipped += len(batch) - len(fresh)
        if not fresh:
            return {}
        _ensure_threads(session, user_id, fresh)
        missing = [record for record in fresh if record.key not in embedded]  # stored by someone else meanwhile
        if missing and embedder is not None:
            embedded = {**embedded, **_embed_new(sessions, embedder, user_id, missing)}
        model_id = embedder.model_id if embedder is not None else None
        # The trigger of migration 0007 would derive two lines per exchange; the import knows the real ones.
        session.execute(text("SELECT set_config('engram.own_lines', 'on', true)"))
        result = session.execute(INSERT_EXCHANGES, _exchange_columns(user_id, fresh, embedded, model_id))
        inserted = {row.external_id: int(row.id) for row in result}
        insert_lines(session, user_id, [(inserted[r.key], r) for r in fresh if r.key in inserted],
                     {r.key: embedded[r.key][1] for r in fresh if r.key in embedded})
        session.execute(text("SELECT set_config('engram.own_lines', 'off', true)"))
    report.stored += len(inserted)
    report.skipped += len(fresh) - len(inserted)
    report.ids_by_key.update(inserted)
    return inserted


def insert_lines(session: Session, user_id: str, stored: list[tuple[int, Record]],
                 line_vectors: dict[str, dict[int, Any]] | None = None) -> None:
    """The lines of newly stored exchanges (a record without lines gets the user_text/reply pair), with the
    vectors of their named speakers' lines (record key → position → vector) when given."""
    rows = []
    for exchange_id, record in stored:
        lines = record.lines or derived_lines(record)
        thread_id = thread_id_for(user_id, record.thread_key)
        vectors = (line_vectors or {}).get(record.key, {})
        rows += [{"user_id": user_id, "exchange_id": exchange_id, "thread_id": thread_id, "position": position,
                  "speaker": line.speaker, "text": line.text, "external_id": line.key, "occurred_at": line.at,
                  "embedding": vector_text(vectors.get(position))}
                 for position, line in enumerate(lines)]
    if not rows:
        return
    # COPY: one round trip for a batch's lines (an INSERT per line was a third of an import's time).
    columns = ("user_id", "exchange_id", "thread_id", "position", "speaker", "text", "external_id", "occurred_at",
               "embedding")
    cursor = session.connection().connection.driver_connection.cursor()
    with cursor.copy(f"COPY {ExchangeLine.__tablename__} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([row[column] for column in columns])


def derived_lines(record: Record) -> list[LineRecord]:
    """A record of only user_text and reply: the person's line (keyed by the record) and the reply."""
    lines = []
    if record.user_text:
        lines.append(LineRecord(record.key, "user", record.user_text, record.at))
    if record.reply:
        key = record.key if not lines else f"{record.key}#reply"
        lines.append(LineRecord(key, "assistant", record.reply, record.at + dt.timedelta(milliseconds=1)))
    return lines


def _existing(session: Session, user_id: str, batch: list[Record]) -> dict[str, int]:
    keys = [record.key for record in batch]
    found = {row.external_id: int(row.id) for row in session.execute(
        select(Exchange.id, Exchange.external_id).where(Exchange.user_id == user_id, Exchange.external_id.in_(keys)))}
    originals = {record.request_id: record.key for record in batch if record.request_id}
    if originals:  # a bundle exported from this very database: the original rows are already here
        for row in session.execute(select(Exchange.id, Exchange.request_id).where(
                Exchange.user_id == user_id, Exchange.request_id.in_(list(originals)))):
            found[originals[row.request_id]] = int(row.id)
    return found


def _ensure_threads(session: Session, user_id: str, records: list[Record]) -> None:
    """Threads and closed sessions of the batch, one statement each (a session's span only widens)."""
    spans: dict[tuple[str, str], list[dt.datetime]] = {}
    for record in records:
        spans.setdefault((record.thread_key, record.session_key), []).append(record.at)
    threads: dict[str, dict[str, Any]] = {}
    sessions: dict[str, dict[str, Any]] = {}
    for (thread_key, session_key), times in spans.items():
        thread_id = thread_id_for(user_id, thread_key)
        known = threads.setdefault(thread_id, {"id": thread_id, "user_id": user_id, "created_at": min(times),
                                               "last_active_at": max(times)})
        known.update(created_at=min(known["created_at"], min(times)),
                     last_active_at=max(known["last_active_at"], max(times)))
        session_id = session_id_for(user_id, session_key)
        row = sessions.setdefault(session_id, {
            "id": session_id, "user_id": user_id, "thread_id": thread_id, "topic": "imported",
            "started_at": min(times), "last_active_at": max(times), "ended_at": max(times),
            "close_reason": "imported"})
        row.update(started_at=min(row["started_at"], min(times)), last_active_at=max(row["last_active_at"], *times),
                   ended_at=max(row["ended_at"], *times))
    session.execute(insert(Thread).values(list(threads.values())).on_conflict_do_nothing())
    statement = insert(ConversationSession).values(list(sessions.values()))
    session.execute(statement.on_conflict_do_update(index_elements=["id"], set_={
        "started_at": func.least(ConversationSession.started_at, statement.excluded.started_at),
        "last_active_at": func.greatest(ConversationSession.last_active_at, statement.excluded.last_active_at),
        "ended_at": func.greatest(ConversationSession.ended_at, statement.excluded.ended_at)}))


# A batch's exchanges as one array per column (text vectors, as the COPY of their lines): one statement compiled once,
# where a multi-row VALUES built by SQLAlchemy and pgvector's per-float formatting were ~60 % of an import's client CPU.
_COLUMNS = ("request_id", "thread_id", "session_id", "source", "user_text", "reply", "mode", "topic", "external_id",
            "occurred_at", "embedding", "embedding_model")
_TYPES = ("text", "text", "text", "text", "text", "text", "text", "text", "text", "timestamptz", "text", "text")
_SELECTED = ", ".join("CAST(n.embedding AS vector)" if c == "embedding" else f"n.{c}" for c in _COLUMNS)
_ARRAYS = ", ".join(f"CAST(:{c} AS {t}[])" for c, t in zip(_COLUMNS, _TYPES, strict=True))
INSERT_EXCHANGES = text(
    f"INSERT INTO exchanges (user_id, {', '.join(_COLUMNS)}, tool_trail, timings, confidence, fallback, "
    f"prompt_tokens, completion_tokens, total_tokens) SELECT :user_id, {_SELECTED}, "
    "'[]'::jsonb, '{}'::jsonb, 0.0, false, 0, 0, 0 "
    f"FROM unnest({_ARRAYS}) WITH ORDINALITY AS n({', '.join(_COLUMNS)}, ord) ORDER BY n.ord "
    "ON CONFLICT DO NOTHING RETURNING id, external_id")


def _exchange_columns(user_id: str, records: list[Record], embedded: dict[str, Any],
                      model_id: str | None) -> dict[str, Any]:
    """The parameters of ``INSERT_EXCHANGES`` for ``records`` (their vectors from ``embedded``, by key)."""
    vectors = [embedded.get(record.key, (None, {}))[0] for record in records]
    return {
        "user_id": user_id,
        "request_id": ["imr-" + digest(user_id, record.key) for record in records],
        "thread_id": [thread_id_for(user_id, record.thread_key) for record in records],
        "session_id": [session_id_for(user_id, record.session_key) for record in records],
        "source": [record.source for record in records], "user_text": [record.user_text for record in records],
        "reply": [record.reply for record in records], "mode": [record.mode for record in records],
        "topic": [record.topic for record in records], "external_id": [record.key for record in records],
        "occurred_at": [record.at for record in records],
        "embedding": [vector_text(vector) for vector in vectors],
        "embedding_model": [model_id if vector is not None else None for vector in vectors],
    }
