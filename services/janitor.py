"""Job leases and the recovery of jobs whose worker died mid-job.

RQ notices a dead worker's job only when the job's registry entry expires (job timeout +
60 s, minutes for a chat). Engram's workers keep a short lease per running job instead;
when a lease lapses, the janitor hands the job back to RQ's own abandoned-job path (which
retries it while retries are left and runs its failure callback otherwise).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from rq import Queue
from rq.registry import StartedJobRegistry
from rq.timeouts import TimerDeathPenalty

from services.queues import ALL_QUEUES

logger = logging.getLogger(__name__)

LEASE_KEY = "engram:joblease:%s"  # exists while a worker is alive and running the job
OWNED_KEY = "engram:jobowned:%s"  # marks jobs run by Engram's workers (plain rq workers have no lease)
LEASE_TTL_S = 10


@contextmanager
def renewed(renew: Callable[[], bool], every_s: float, name: str) -> Iterator[None]:
    """Call ``renew`` every ``every_s`` from a side thread while the body runs; it stops when renew says False.

    The side thread dies with the process, so whatever it renews lapses when a worker is killed.
    """
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                if not renew():
                    logger.warning("%s: lost; no longer renewing", name)
                    return
            except redis.RedisError:
                logger.warning("%s: could not renew (Redis error); trying again", name)

    renewer = threading.Thread(target=loop, name=name, daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join(timeout=1)


@contextmanager
def job_lease(connection: redis.Redis, job_id: str, ttl_s: int = LEASE_TTL_S) -> Iterator[None]:
    """Hold a lease on a running job; it lapses within ``ttl_s`` if the process dies."""
    connection.set(LEASE_KEY % job_id, "1", ex=ttl_s)
    connection.set(OWNED_KEY % job_id, "1", ex=24 * 3600)
    try:
        with renewed(lambda: bool(connection.set(LEASE_KEY % job_id, "1", ex=ttl_s)), ttl_s / 3, f"lease {job_id}"):
            yield
    finally:
        connection.delete(LEASE_KEY % job_id, OWNED_KEY % job_id)


def recover_abandoned(connection: redis.Redis, queue_names: tuple[str, ...] = ALL_QUEUES) -> list[str]:
    """Return abandoned jobs to RQ: retried if retries are left, failed (with callback) if not."""
    recovered: list[str] = []
    for name in queue_names:
        # Timer-based death penalty: the janitor runs off the main thread, where RQ's default
        # SIGALRM penalty cannot be installed (and the failure callback would never run).
        registry = StartedJobRegistry(queue=Queue(name, connection=connection), death_penalty_class=TimerDeathPenalty)
        expired_now = time.time() - 1
        found = len(recovered)
        for member in connection.zrange(registry.key, 0, -1):
            member_text = member.decode() if isinstance(member, bytes) else member
            job_id = member_text.split(":", 1)[0]
            if connection.exists(OWNED_KEY % job_id) and not connection.exists(LEASE_KEY % job_id):
                # Mark the entry expired so RQ's cleanup treats it as abandoned, exactly as it
                # would after the long registry timeout.
                connection.zadd(registry.key, {member_text: expired_now})
                connection.delete(OWNED_KEY % job_id)
                recovered.append(job_id)
        if len(recovered) > found:
            registry.cleanup()
    if recovered:
        logger.warning("recovered %d abandoned job(s): %s", len(recovered), ", ".join(recovered))
    return recovered
