"""Table models of memory: chunks, facts, episodes and exchange access counts (migration 0003)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import BigInteger, Computed, DateTime, Float, ForeignKey, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from services.db import EMBEDDING_DIM, Base

USER_FK = "users.id"


def iso(value: dt.datetime | None) -> str | None:
    """A timestamp as ISO 8601 text for JSON (None stays None)."""
    return value.isoformat() if value else None


def from_iso(value: str | None) -> dt.datetime | None:
    """ISO 8601 text back to a timestamp (None or empty stays None)."""
    return dt.datetime.fromisoformat(value) if value else None


class MemoryChunk(Base):
    """The LLM's reading of one exchange (``status`` failed: enrichment gave up, the exchange stays)."""

    __tablename__ = "memory_chunks"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"), index=True)
    exchange_id: Mapped[int] = mapped_column(ForeignKey("exchanges.id", ondelete="CASCADE"), unique=True)
    session_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(16))
    chunk: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    salience: Mapped[float | None] = mapped_column(Float, nullable=True)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Fact(Base):
    """Something the person told us about themselves; superseded facts stay as history."""

    __tablename__ = "facts"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    subject: Mapped[str | None] = mapped_column(String(200), nullable=True)
    predicate: Mapped[str | None] = mapped_column(String(200), nullable=True)
    object: Mapped[str | None] = mapped_column(Text, nullable=True)
    fact_key: Mapped[str | None] = mapped_column(String(400), nullable=True)
    speaker: Mapped[str] = mapped_column(String(16), default="user")
    confidence: Mapped[float] = mapped_column(Float, default=1.0)
    salience: Mapped[float] = mapped_column(Float, default=0.5)
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(64), nullable=True)
    source_exchange_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), default=list)
    external_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    mentions: Mapped[int] = mapped_column(Integer, default=1)
    superseded_by: Mapped[int | None] = mapped_column(ForeignKey("facts.id", ondelete="SET NULL"), nullable=True)
    superseded_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    access_count: Mapped[int] = mapped_column(Integer, default=0)
    last_accessed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    search: Mapped[Any] = mapped_column(TSVECTOR, Computed("to_tsvector('english', coalesce(text, ''))",
                                                           persisted=True))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Episode(Base):
    """One closed session, told as a story: title, gist, summary, outcome, open loops."""

    __tablename__ = "episodes"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"), index=True)
    session_id: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(Text)
    gist: Mapped[str] = mapped_column(Text, default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    intent: Mapped[str | None] = mapped_column(Text, nullable=True)
    emotion: Mapped[str | None] = mapped_column(String(100), nullable=True)
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)
    salience: Mapped[float] = mapped_column(Float, default=0.5)
    open_loops: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    ended_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    exchange_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), default=list)
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(64), nullable=True)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    access_count: Mapped[int] = mapped_column(Integer, default=0)
    last_accessed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    search: Mapped[Any] = mapped_column(
        TSVECTOR,
        Computed("to_tsvector('english', coalesce(title, '') || ' ' || coalesce(gist, '') || ' ' || "
                 "coalesce(summary, ''))", persisted=True),
    )
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ExchangeAccess(Base):
    """How often recall returned an exchange (access reinforcement)."""

    __tablename__ = "exchange_access"
    exchange_id: Mapped[int] = mapped_column(ForeignKey("exchanges.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"), index=True)
    access_count: Mapped[int] = mapped_column(Integer, default=0)
    last_accessed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ExchangeLine(Base):
    """One turn of an exchange (migration 0007): who said what, when, under which external id."""

    __tablename__ = "exchange_lines"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"))
    exchange_id: Mapped[int] = mapped_column(ForeignKey("exchanges.id", ondelete="CASCADE"))
    thread_id: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    speaker: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    external_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    occurred_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    search: Mapped[Any] = mapped_column(TSVECTOR, Computed(
        "to_tsvector('english', CASE WHEN lower(speaker) IN ('user', 'assistant') THEN '' "
        "ELSE speaker || ' ' END || text)", persisted=True))
    # The line's rank in its thread by (occurred_at, id), from 0, kept dense by triggers (migration 0016).
    thread_pos: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # A named speaker's turn only (migration 0009): the speaker arm of recall ranks that person's turns.
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
