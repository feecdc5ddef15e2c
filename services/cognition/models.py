"""Table models of the cognition services (schema in migration 0006) and the reads other modules need."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, func, select
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, Session, mapped_column

from services.db import Base

USER_FK = "users.id"
DECISION_FK = "routing_decisions.id"


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


class RoutingFollowup(Base):
    """What the person's next message said about a routing decision (triage calibration's label)."""

    __tablename__ = "routing_followups"
    decision_id: Mapped[int] = mapped_column(ForeignKey(DECISION_FK, ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(16))
    follow_request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    similarity: Mapped[float | None] = mapped_column(Float, nullable=True)
    fire_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class TriageCalibration(Base):
    """The misroute rate over a window of routing decisions, from their follow-ups."""

    __tablename__ = "triage_calibrations"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    fire_id: Mapped[str] = mapped_column(String(200), unique=True)
    window_start: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    window_end: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    decisions: Mapped[int] = mapped_column(Integer, default=0)
    misroutes: Mapped[int] = mapped_column(Integer, default=0)
    misroute_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    by_label: Mapped[dict[str, int]] = mapped_column(JSONB, default=dict)
    by_mode: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class RoutingReview(Base):
    """The LLM's verdict on one routing decision: did the mode fit, and if not, which would have."""

    __tablename__ = "routing_reviews"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    decision_id: Mapped[int] = mapped_column(ForeignKey(DECISION_FK, ondelete="CASCADE"), unique=True)
    user_id: Mapped[str] = mapped_column(ForeignKey(USER_FK, ondelete="CASCADE"))
    fire_id: Mapped[str] = mapped_column(String(200))
    chosen_mode: Mapped[str] = mapped_column(String(16))
    fit: Mapped[bool] = mapped_column(Boolean)
    better_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    followup_label: Mapped[str | None] = mapped_column(String(16), nullable=True)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class RoutingPressure(Base):
    """How one review wants one weight to move: + raise ``mode``'s weight on ``signal``, − lower it."""

    __tablename__ = "routing_pressure"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    review_id: Mapped[int] = mapped_column(ForeignKey("routing_reviews.id", ondelete="CASCADE"))
    mode: Mapped[str] = mapped_column(String(16))
    signal: Mapped[str] = mapped_column(String(64))
    pressure: Mapped[float] = mapped_column(Float)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class RegulatorStep(Base):
    """One bounded change of one router weight, later kept or reverted on the pressure that followed."""

    __tablename__ = "regulator_steps"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    fire_id: Mapped[str] = mapped_column(String(200), unique=True)
    mode: Mapped[str] = mapped_column(String(16))
    signal: Mapped[str] = mapped_column(String(64))
    old_weight: Mapped[float] = mapped_column(Float)
    new_weight: Mapped[float] = mapped_column(Float)
    pressure_before: Mapped[float] = mapped_column(Float)
    reviews_before: Mapped[int] = mapped_column(Integer)
    misroute_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    pressure_after: Mapped[float | None] = mapped_column(Float, nullable=True)
    decided_fire_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    decided_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
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


def shared_thoughts(session: Session, user_id: str, since: dt.datetime, limit: int) -> list[DriftGist]:
    """Drift thoughts pushed to the person since ``since``, newest first."""
    return list(session.scalars(select(DriftGist).where(DriftGist.user_id == user_id,
                                                        DriftGist.pushed_event_id.is_not(None),
                                                        DriftGist.created_at >= since)
                                .order_by(DriftGist.created_at.desc()).limit(limit)))
