"""Table models of the cognition services (schema in migration 0006) and the newest autobiography's read."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, DateTime, Float, ForeignKey, String, Text, func, select
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, Session, mapped_column

from services.db import Base

USER_FK = "users.id"


class DriftGist(Base):
    """One background thought about a person's recent memories; pushed when relevant enough."""

    __tablename__ = "drift_gists"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"))
    fire_id: Mapped[str] = mapped_column(String(200))
    topic: Mapped[str] = mapped_column(String(200), default="")
    text: Mapped[str] = mapped_column(Text, default="")
    relevance: Mapped[float] = mapped_column(Float, default=0.0)
    seeds: Mapped[list[str]] = mapped_column(JSONB, default=list)
    associations: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    sources: Mapped[list[str]] = mapped_column(JSONB, default=list)
    memory_until: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    pushed_event_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    pushed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Autobiography(Base):
    """The person's story as the assistant understands it, rewritten as new episodes arrive."""

    __tablename__ = "autobiographies"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"))
    fire_id: Mapped[str] = mapped_column(String(200))
    narrative: Mapped[str] = mapped_column(Text)
    episode_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), default=list)
    episodes_until: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


def latest_autobiography(session: Session, user_id: str) -> Autobiography | None:
    """The person's newest narrative, or None before the first synthesis."""
    return session.scalar(select(Autobiography).where(Autobiography.user_id == user_id)
                          .order_by(Autobiography.created_at.desc(), Autobiography.id.desc()).limit(1))

