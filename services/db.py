"""PostgreSQL access: engine, sessions and the table models.

The schema itself is owned by Alembic (``migrations/``); these models mirror it for queries.
"""

from __future__ import annotations

import datetime as dt
import logging
import select
import time
import uuid
from functools import lru_cache
from typing import Any

import numpy as np
from pgvector.sqlalchemy import Vector
from psycopg.pq import Format
from sqlalchemy import (
    BigInteger,
    Boolean,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    func,
    text,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR, insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

logger = logging.getLogger(__name__)

EMBEDDING_DIM = 384
# What a restarting PostgreSQL answers a new connection: nothing listening yet (no SQLSTATE: refused, no socket),
# or 57P03 cannot_connect_now ("the database system is starting up", "not yet accepting connections", "in
# recovery mode"). Anything else (a wrong password, no such database) fails at once.
RESTARTING_SQLSTATES = frozenset({None, "57P03"})
BINARY = Format.BINARY
# An execution option: the statement's rows come back in PostgreSQL's binary format (``make_engine``'s engines).
BINARY_RESULTS = "binary_results"


def sqlalchemy_url(url: str) -> str:
    """Normalise a PostgreSQL URL to the psycopg 3 driver SQLAlchemy should use."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ValueError(f"not a PostgreSQL URL: {url!r}")


def vector_text(vector: Any) -> str | None:
    """A vector in pgvector's text form, each value as its float32 to 9 significant digits: what any float32 needs
    to parse back to itself (PostgreSQL reads each with ``strtof``), so the database gets the very floats the model
    made. None stays None. One C-level format for all the values (~0.08 ms for 384 floats, where formatting each one
    took ~0.5 ms). The query vector recall binds and every vector the importer, the backfill and the vocabulary
    write."""
    if vector is None:
        return None
    values = np.asarray(vector, dtype=np.float32).ravel().tolist()
    return _vector_format(len(values)) % tuple(values)


@lru_cache(maxsize=8)
def _vector_format(dim: int) -> str:
    return "[" + ",".join(["%.9g"] * dim) + "]"


def make_engine(database_url: str, *, pool_size: int = 5, wait_s: float = 0.0) -> Engine:
    """Create the engine; callers own it and dispose it on shutdown.

    ``wait_s``: how long a new connection waits for a database that is restarting (``patient_connect``); the
    workers wait (a job should outlive a crash recovery), the web process does not (it answers 503 at once).
    """
    engine = create_engine(sqlalchemy_url(database_url), pool_size=pool_size, future=True)
    if wait_s > 0:
        event.listen(engine, "do_connect", patient_connect(wait_s))
    event.listen(engine, "connect", utc_session)
    event.listen(engine, "checkout", discard_if_closed_by_server)
    event.listen(engine, "before_cursor_execute", _result_format)
    return engine


def patient_connect(wait_s: float) -> Any:
    """A ``do_connect`` hook: connect, and while the server answers that it is (re)starting, try again for up to
    ``wait_s``.

    After a ``kill -9`` PostgreSQL replays its write-ahead log before it takes connections: 10-30 s on a loaded
    machine, longer than a job's retries (1 s, 5 s) last. Waiting in the connect is the one place every
    statement of every job passes through, so nothing between two statements is half-done: the job simply
    stalls, then goes on. Past ``wait_s`` the server's own error is raised, with a log line saying so.
    """

    def connect(dialect: Any, connection_record: Any, cargs: Any, cparams: Any) -> Any:
        deadline, pause, warned = time.monotonic() + wait_s, 0.1, False
        while True:
            try:
                return dialect.connect(*cargs, **cparams)
            except dialect.loaded_dbapi.OperationalError as exc:
                if getattr(exc, "sqlstate", None) not in RESTARTING_SQLSTATES:
                    raise
                if time.monotonic() + pause > deadline:
                    logger.error("PostgreSQL did not accept connections within %.0f s: %s", wait_s, exc)
                    raise
                if not warned:
                    logger.warning("PostgreSQL is not accepting connections (%s); waiting up to %.0f s",
                                   (str(exc).strip().splitlines() or ["no answer"])[0], wait_s)
                    warned = True
            time.sleep(pause)
            pause = min(pause * 2, 1.0)

    return connect


def utc_session(dbapi_connection: Any, connection_record: Any) -> None:
    """Each new connection's session time zone is UTC, whatever the server's default (the embedded one's initdb
    writes the machine's: ``Etc/UTC`` here).

    Every time the app stores or reads is timezone-aware and converted explicitly (no statement depends on the
    session's zone), so only the driver's timestamptz values change: their ``tzinfo`` becomes ``timezone.utc``.
    Under any other zone name psycopg converts each value through ``zoneinfo`` (~0.3 µs each: 1,000 rows 0.46 →
    0.17 ms), and subtracting it from an ``dt.UTC`` time asks both offsets; recall loads ~600–1,000 a time.
    One statement per pooled connection, when it is opened.
    """
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("SET TimeZone TO 'UTC'")
    finally:
        cursor.close()
    dbapi_connection.commit()  # a plain SET lasts for the session once its transaction ends


def _result_format(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
    """Binary rows for a statement executed with the ``BINARY_RESULTS`` option (each execution has its own cursor).

    Recall's ~600–1,000 window rows of floats, ids and times: the driver loads them in ~2/3 of the CPU it takes to
    parse their text (~0.7 ms less a recall), and the server formats no text; the values are the same.
    """
    if context is not None and context.execution_options.get(BINARY_RESULTS):
        cursor.format = BINARY


def discard_if_closed_by_server(dbapi_connection: Any, connection_record: Any, connection_proxy: Any) -> None:
    """A pool pre-ping without the round trip: a checked-in connection has nothing to read.

    A PostgreSQL that restarted (or ended the session) has closed the socket, so it reads as
    end-of-file; an unexpected message is no better. Either way the whole pool is replaced, as
    ``pool_pre_ping`` does when its ``SELECT 1`` fails, and the checkout gets a new connection. This
    runs on every checkout — two per chat turn in the digest — where ``SELECT 1`` cost a round trip each.
    """
    if dbapi_connection.closed or _readable(dbapi_connection):
        raise InvalidatePoolError("the server closed this pooled connection")


def _readable(dbapi_connection: Any) -> bool:
    # poll, not select: select() refuses descriptors above 1023, which a web process holding a
    # thousand open streams has, and every checkout would then throw the pool away.
    poller = select.poll()
    try:
        poller.register(dbapi_connection.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # no usable socket: treat it as gone
        return True


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def relaxed_commit(session: Session) -> None:
    """Let this transaction's commit return before its WAL reaches disk (``synchronous_commit = off``).

    Only for writes that are derived or refreshed on every turn (a thread's last-active time, topic
    centroids, session placement, recall access counts): a PostgreSQL crash can lose the last
    fraction of a second of them, never corrupt anything, and the chat path saves an fsync each.
    Exchanges, facts and everything a person wrote keep the default, durable commit, and since
    WAL is flushed in order, a durable commit also makes every earlier relaxed one durable: a
    stored exchange never points at a session or thread row that a crash could take back.
    """
    session.execute(sql_text("SET LOCAL synchronous_commit TO OFF"))


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Thread(Base):
    __tablename__ = "threads"
    id: Mapped[str] = mapped_column(String(64), primary_key=True, default=lambda: str(uuid.uuid4()))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    last_active_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Exchange(Base):
    __tablename__ = "exchanges"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    request_id: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    thread_id: Mapped[str] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(String(16), default="text")
    user_text: Mapped[str] = mapped_column(Text)
    reply: Mapped[str] = mapped_column(Text, default="")
    mode: Mapped[str] = mapped_column(String(16))
    topic: Mapped[str] = mapped_column(String(200), default="general")
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    tool_trail: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    total_tokens: Mapped[int] = mapped_column(Integer, default=0)
    timings: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    fallback: Mapped[bool] = mapped_column(Boolean, default=False)
    session_id: Mapped[str | None] = mapped_column(ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True)
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(64), nullable=True)
    external_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    occurred_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    search: Mapped[Any] = mapped_column(TSVECTOR, Computed("to_tsvector('english', coalesce(user_text, '') || ' ' || "
                                                           "coalesce(reply, ''))", persisted=True))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Topic(Base):
    __tablename__ = "topics"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    centroid: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM))
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ConversationSession(Base):
    """A run of exchanges on one topic in one thread; closing it makes an episode."""

    __tablename__ = "sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    thread_id: Mapped[str] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"))
    topic: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    last_active_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    ended_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    close_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)


class RoutingDecision(Base):
    __tablename__ = "routing_decisions"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    request_id: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    thread_id: Mapped[str] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"), index=True)
    exchange_id: Mapped[int | None] = mapped_column(ForeignKey("exchanges.id", ondelete="CASCADE"), nullable=True)
    mode: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    scores: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    signals: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    margin: Mapped[float] = mapped_column(Float, default=0.0)
    tiebreaker_used: Mapped[bool] = mapped_column(Boolean, default=False)
    tiebreaker_result: Mapped[str | None] = mapped_column(String(16), nullable=True)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    weights_version: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The remembered items context assembly put into the prompt (the chat page's receipts).
    recalled: Mapped[list[Any]] = mapped_column(JSONB, default=list, server_default=text("'[]'::jsonb"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


__all__ = [
    "EMBEDDING_DIM",
    "Base",
    "ConversationSession",
    "Exchange",
    "RoutingDecision",
    "Thread",
    "Topic",
    "User",
    "Vector",
    "insert",
    "make_engine",
    "make_sessionmaker",
    "sqlalchemy_url",
    "utcnow",
    "vector_text",
]
