"""The scheduler role: finds due periodic work and enqueues it; one active instance.

It runs no service itself. Every enabled service of ``configs/schedules.toml`` gets an
APScheduler job whose tick, on the leader only, queues one runner job per fire
(``services/periodic/firing.py``). Besides those it runs the janitor that hands jobs of dead
workers back to RQ within seconds, and the quiet-session sweep.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy.orm import Session, sessionmaker

from services.connections import redis_client
from services.db import make_engine, make_sessionmaker, utcnow
from services.janitor import ScheduledMover, recover_abandoned
from services.logs import configure_logging
from services.periodic.firing import fire_scheduled
from services.periodic.schedules import ServiceSpec, load_schedules, schedules_path
from services.queues import DELETE_IF_HELD
from services.service_call import system_clock
from services.sessions import SESSION_IDLE_S, close_quiet_sessions
from services.settings import Settings
from services.supervisor import beat, pid_alive, process_key

logger = logging.getLogger(__name__)

LEADER_KEY = "engram:scheduler:leader"
LEADER_TTL_S = 30
HOUSEKEEPING_EVERY_S = 1
# A tick missed while the process was busy or paused still runs within this grace, and only once
# (coalesce): five missed minutes of a one-minute service are one fire, not five.
MISFIRE_GRACE_S = 300


class Leadership:
    """A Redis lease: only the holder fires schedules; a standby takes over when it lapses.

    The lease names its holder's ``host:pid``, so a scheduler restarted on the same host after a
    ``kill -9`` takes over at once instead of leaving retries unmoved until the lease lapses.
    """

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection
        self.token = f"{process_key()}:{uuid.uuid4().hex}"

    def hold(self) -> bool:
        current = self.connection.get(LEADER_KEY)
        holder = current.decode() if current is not None else None
        if holder == self.token:
            self.connection.expire(LEADER_KEY, LEADER_TTL_S)
            return True
        if holder is not None and _dead_here(holder):
            logger.warning("scheduler leader %s is gone; taking over", holder)
            self.connection.eval(DELETE_IF_HELD, 1, LEADER_KEY, holder)  # not one someone took meanwhile
        return bool(self.connection.set(LEADER_KEY, self.token, nx=True, ex=LEADER_TTL_S))


def _dead_here(holder: str) -> bool:
    """Is the lease's holder a process of this host that no longer runs? (Other hosts: wait for the lapse.)"""
    host, _, rest = holder.partition(":")
    pid = rest.split(":", 1)[0]
    return host == socket.gethostname() and pid.isdigit() and not pid_alive(int(pid))


class ServiceTick:
    """The APScheduler job of one service: on the leader, queue this fire's runner job."""

    def __init__(self, connection: redis.Redis, leadership: Leadership, spec: ServiceSpec,
                 clock: Callable[[], datetime] = system_clock) -> None:
        self.connection, self.leadership, self.spec, self.clock = connection, leadership, spec, clock

    def __call__(self) -> str:
        if not self.leadership.hold():
            return "standby"
        outcome = fire_scheduled(self.connection, self.spec, self.spec.fire_time(self.clock()))
        logger.info("periodic %s: %s", self.spec.name, outcome, extra={"service": self.spec.name})
        return outcome


def build_scheduler(settings: Settings, connection: redis.Redis, sessions: sessionmaker[Session] | None = None,
                    *, scheduler_class: type[BaseScheduler] = BlockingScheduler) -> BaseScheduler:
    """The scheduler with housekeeping, the session sweep and every enabled service (not started)."""
    leadership = Leadership(connection)
    scheduler = scheduler_class(timezone=UTC, job_defaults={"coalesce": True, "max_instances": 1,
                                                            "misfire_grace_time": MISFIRE_GRACE_S})

    mover = ScheduledMover(connection)

    def housekeeping() -> None:
        beat(connection)
        if leadership.hold():
            recover_abandoned(connection)
            mover.tick()  # right after recovery: a recovered job's retry is due in a second

    # Every second: a retry or a dead worker's job runs within seconds of being due.
    scheduler.add_job(housekeeping, IntervalTrigger(seconds=HOUSEKEEPING_EVERY_S), id="housekeeping",
                      next_run_time=utcnow())
    if sessions is not None:

        def close_sessions() -> None:
            if leadership.hold():
                closed = close_quiet_sessions(sessions, connection, idle_after_s=SESSION_IDLE_S)
                logger.info("session sweep closed %d quiet session(s)", len(closed))

        # The first sweep at start: sessions that went quiet while Engram was down close now, and the
        # process's first ORM use (mapper set-up, statement compilation: ~0.15 s of CPU) is over
        # before chats arrive rather than a minute later, in the middle of whatever runs then.
        scheduler.add_job(close_sessions, IntervalTrigger(seconds=60), id="quiet-sessions", next_run_time=utcnow())
    for spec in load_schedules(schedules_path(settings)).values():
        if not spec.enabled:
            logger.info("periodic %s is disabled in %s", spec.name, schedules_path(settings).name)
            continue
        scheduler.add_job(ServiceTick(connection, leadership, spec), spec.trigger(), id=f"service:{spec.name}")
        logger.info("scheduled %s (%s) on %s", spec.name, spec.schedule, spec.queue)
    return scheduler


def main() -> None:
    settings = Settings.from_env()
    configure_logging(settings.log_level, role="scheduler")
    if not settings.redis_url:
        raise SystemExit("the scheduler needs REDIS_URL (engram run sets it)")
    connection = redis_client(settings.redis_url)
    engine = make_engine(settings.database_url) if settings.database_url else None
    scheduler = build_scheduler(settings, connection, make_sessionmaker(engine) if engine is not None else None)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=scheduler.shutdown, kwargs={"wait": False}, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    logger.info("scheduler started")
    scheduler.start()


if __name__ == "__main__":
    main()
