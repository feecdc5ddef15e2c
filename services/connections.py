"""Redis clients with a retry policy that fits their process.

A dropped connection is retried by redis-py itself, so a Redis that restarts (the supervisor
brings the embedded one back within about a second) is invisible to a patient caller. Workers
and the scheduler are patient: a job in flight should finish, not fail, over a restart. The web
process retries only briefly, then answers 503 rather than holding a request open.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

# 0.1 + 0.2 + 0.4 + 0.8 + 1 s × 6 ≈ 7.5 s of reconnecting before an error surfaces.
PATIENT_RETRIES, PATIENT_BACKOFF = 10, ExponentialBackoff(cap=1.0, base=0.05)
# 0.05 + 0.1 + 0.2 + 0.4 ≈ 0.75 s.
BRIEF_RETRIES, BRIEF_BACKOFF = 4, ExponentialBackoff(cap=0.5, base=0.025)


def patient_retry() -> Retry:
    """For workers and the scheduler: ride over a Redis restart."""
    return Retry(PATIENT_BACKOFF, PATIENT_RETRIES)


def brief_retry() -> Retry:
    """For the web process: reconnect to a restarted Redis, but fail fast while it is down."""
    return Retry(BRIEF_BACKOFF, BRIEF_RETRIES)


def redis_client(url: str, *, patient: bool = True, **options: Any) -> redis.Redis:
    """A client for ``url`` with the retry policy of its kind of process."""
    retry = patient_retry() if patient else brief_retry()
    return redis.Redis.from_url(url, retry=retry, socket_connect_timeout=2, **options)
