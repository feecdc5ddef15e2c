"""The scheduler role: finds due periodic work and enqueues it; one active instance.

It runs no LLM work itself. Besides the periodic services of ``configs/schedules.toml`` it
runs the janitor that hands jobs of dead workers back to RQ within seconds.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy.orm import Session, sessionmaker

from services.config_files import read_toml
from services.connections import redis_client
from services.db import make_engine, make_sessionmaker, utcnow
from services.janitor import ScheduledMover, recover_abandoned
from services.logs import configure_logging
from services.queues import enqueue
from services.sessions import SESSION_IDLE_S, close_quiet_sessions
from services.settings import Settings
from services.supervisor import beat, pid_alive, process_key

logger = logging.getLogger(__name__)

LEADER_KEY = "engram:scheduler:leader"
FIRED_KEY = "engram:scheduler:fired:%s:%s"  # service, fire time → set once, so two schedulers never double-fire
LEADER_TTL_S = 30
HOUSEKEEPING_EVERY_S = 1


def load_schedules(configs_dir: Path) -> dict[str, dict[str, Any]]:
    """Periodic services from ``configs/schedules.toml``: name → {cron, queue, job}."""
    return dict((read_toml(configs_dir / "schedules.toml") or {}).get("services", {}))


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
            self.connection.eval(_DELETE_IF_HELD_BY, 1, LEADER_KEY, holder)
        return bool(self.connection.set(LEADER_KEY, self.token, nx=True, ex=LEADER_TTL_S))


# Compare-and-delete: never remove a lease someone else took meanwhile.
_DELETE_IF_HELD_BY = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def _dead_here(holder: str) -> bool:
    """Is the lease's holder a process of this host that no longer runs? (Other hosts: wait for the lapse.)"""
    host, _, rest = holder.partition(":")
    pid = rest.split(":", 1)[0]
    return host == socket.gethostname() and pid.isdigit() and not pid_alive(int(pid))


def fire_once(connection: redis.Redis, service: str, fire_time: float, action: Callable[[], Any]) -> bool:
    """Run ``action`` for this fire time unless another scheduler already did."""
    if not connection.set(FIRED_KEY % (service, int(fire_time)), "1", nx=True, ex=24 * 3600):
        return False
    action()
    return True


def build_scheduler(
    settings: Settings, connection: redis.Redis, sessions: sessionmaker[Session] | None = None
) -> BlockingScheduler:
    leadership = Leadership(connection)
    # coalesce: a tick missed while the process was busy or down runs once, not N times.
    scheduler = BlockingScheduler(job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 300})

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

        scheduler.add_job(close_sessions, IntervalTrigger(seconds=60), id="quiet-sessions")
    for name, spec in load_schedules(settings.configs_dir).items():
        scheduler.add_job(
            _enqueue_service(connection, leadership, name, spec),
            CronTrigger.from_crontab(spec["cron"], timezone="UTC"),
            id=name,
        )
        logger.info("scheduled %s (%s) on %s", name, spec["cron"], spec["queue"])
    return scheduler


def _enqueue_service(
    connection: redis.Redis, leadership: Leadership, name: str, spec: dict[str, Any]
) -> Callable[[], None]:
    def tick() -> None:
        if not leadership.hold():
            return
        fire_time = time.time() // 60 * 60
        fired = fire_once(
            connection,
            name,
            fire_time,
            lambda: enqueue(connection, spec["queue"], spec["job"], job_id=f"periodic-{name}"),
        )
        logger.info("periodic %s: %s", name, "enqueued" if fired else "already fired")

    return tick


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
