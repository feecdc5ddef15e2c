"""``service_runs``: one row per fire of a periodic service, written once whoever runs it.

A run is claimed by inserting ``(service, fire_id)``; the unique key makes a second scheduler,
a retried RQ job or a repeated manual request for the same fire find the row instead of
running again. A row left ``running`` by a worker that died is taken over after
``STALE_AFTER_S`` (the service itself is idempotent, so running it again is safe).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, DateTime, Integer, String, Text, func, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from services.db import Base, insert
from services.service_call import ServiceResult

STALE_AFTER_S = 3600  # longer than any service's job timeout


class ServiceRun(Base):
    __tablename__ = "service_runs"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    service: Mapped[str] = mapped_column(String(100))
    fire_id: Mapped[str] = mapped_column(String(200))
    trigger: Mapped[str] = mapped_column(String(16), default="schedule")
    outcome: Mapped[str] = mapped_column(String(16), default="running")
    reason: Mapped[str] = mapped_column(Text, default="")
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    scheduled_for: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)


@dataclass(frozen=True)
class LastRun:
    at: dt.datetime
    outcome: str
    reason: str
    duration_ms: int | None
    details: dict[str, Any]


def claim_run(sessions: sessionmaker[Session], service: str, fire_id: str, *, trigger: str,
              scheduled_for: dt.datetime | None, now: dt.datetime) -> bool:
    """True when this caller should run the fire: it inserted the row, or took over a stale one."""
    with sessions.begin() as session:
        inserted = session.scalar(
            insert(ServiceRun).values(service=service, fire_id=fire_id, trigger=trigger, outcome="running",
                                      scheduled_for=scheduled_for, started_at=now)
            .on_conflict_do_nothing(constraint="uq_service_runs_fire").returning(ServiceRun.id))
        if inserted is not None:
            return True
        stale = now - dt.timedelta(seconds=STALE_AFTER_S)
        taken = session.scalar(
            update(ServiceRun).where(ServiceRun.service == service, ServiceRun.fire_id == fire_id,
                                     ServiceRun.outcome == "running", ServiceRun.started_at < stale)
            .values(started_at=now).returning(ServiceRun.id))
        return taken is not None


def finish_run(sessions: sessionmaker[Session], service: str, fire_id: str, result: ServiceResult, *,
               duration_ms: int, now: dt.datetime) -> None:
    """Write the outcome of a claimed run."""
    with sessions.begin() as session:
        session.execute(
            update(ServiceRun).where(ServiceRun.service == service, ServiceRun.fire_id == fire_id)
            .values(outcome=result.outcome, reason=result.reason[:2000], details=_jsonable(result.details),
                    finished_at=now, duration_ms=duration_ms))


def run_outcome(session: Session, service: str, fire_id: str) -> ServiceRun | None:
    return session.scalars(select(ServiceRun).where(ServiceRun.service == service,
                                                    ServiceRun.fire_id == fire_id)).first()


def last_runs(session: Session) -> dict[str, LastRun]:
    """The latest run of every service that has run."""
    rows = session.scalars(select(ServiceRun).distinct(ServiceRun.service)
                           .order_by(ServiceRun.service, ServiceRun.started_at.desc(), ServiceRun.id.desc()))
    return {row.service: LastRun(row.started_at, row.outcome, row.reason, row.duration_ms, dict(row.details or {}))
            for row in rows}


def _jsonable(details: dict[str, Any]) -> dict[str, Any]:
    """Details as JSON can hold them (a service may put a datetime or a set in its counts)."""
    out: dict[str, Any] = {}
    for key, value in details.items():
        if isinstance(value, dt.datetime):
            value = value.isoformat()
        elif isinstance(value, set | tuple):
            value = sorted(value) if isinstance(value, set) else list(value)
        elif not isinstance(value, str | int | float | bool | list | dict | type(None)):
            value = str(value)
        out[str(key)] = value
    return out


def service_table(specs: dict[str, Any], runs: dict[str, LastRun], now: dt.datetime) -> list[dict[str, Any]]:
    """One row per configured service: schedule, switch, queue, last run and next run (JSON-ready)."""
    table = []
    for name, spec in sorted(specs.items()):
        last = runs.get(name)
        following = spec.next_run(now)
        table.append({
            "name": name, "schedule": spec.schedule, "enabled": spec.enabled, "queue": spec.queue, "job": spec.job,
            "description": spec.description,
            "last_run_at": last.at.isoformat() if last else None, "last_outcome": last.outcome if last else None,
            "last_reason": last.reason if last else None, "last_duration_ms": last.duration_ms if last else None,
            "next_run_at": following.isoformat() if following else None,
        })
    return table
