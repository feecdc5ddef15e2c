"""A job lease held around a block, for tests that exercise leases without an RQ worker."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from services.janitor import LEASE_TTL_S, drop_lease, hold_lease, renewing_lease
from services.supervisor import process_key


@contextmanager
def job_lease(connection: redis.Redis, job_id: str, ttl_s: int = LEASE_TTL_S) -> Iterator[None]:
    """Hold a lease on a running job; it lapses within ``ttl_s`` if the process dies.

    The same three steps EngramWorker runs inside RQ's own start and end transactions
    (``hold_lease``, ``renewing_lease``, ``drop_lease``), for code that runs a job outside them.

    The lease holds a token of this run, so a run whose job was handed on (its lease lapsed while it
    lived, e.g. over a long Redis outage) neither renews nor releases its successor's lease.
    """
    token = uuid.uuid4().hex
    pipe = connection.pipeline(transaction=False)
    hold_lease(pipe, job_id, token, process_key(), ttl_s)
    pipe.execute()
    try:
        with renewing_lease(connection, job_id, token, ttl_s):
            yield
    finally:
        pipe = connection.pipeline(transaction=False)
        drop_lease(pipe, job_id, token, process_key())
        pipe.execute()
