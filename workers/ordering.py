"""Per-thread ordering: jobs of one thread run one at a time, in arrival order.

Each thread has a pending list (request ids in arrival order, written by ``POST /chat``)
and a renewable lease. A digest job waits for the lease, then processes the *head* of
its thread's list — which may be an earlier message whose own job is still queued or was
orphaned by a crashed worker — until its own message is done. So order holds across any
number of workers, a crashed worker's message is taken over once its lease lapses, and a
job whose message someone else already finished returns at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis

from services.errors import ThreadBusy
from services.janitor import renewed
from services.queues import ChatRequest, ThreadLease, load_request, pending_head, remove_pending
from services.streams import EventLog, request_channel
from services.supervisor import process_key

logger = logging.getLogger(__name__)

POLL_S = 0.05


def is_finished(events: EventLog, request_id: str) -> bool:
    """A request is finished once its final output is recorded (reply or error)."""
    return events.get_output(request_id) is not None


def process_in_order(
    connection: redis.Redis,
    events: EventLog,
    request: ChatRequest,
    process: Callable[[ChatRequest], None],
    *,
    wait_s: float,
) -> str:
    """Run ``process`` for every unfinished message of the thread up to and including ``request``."""
    deadline = time.monotonic() + wait_s
    while True:
        # One round trip: the lease, and what the holder needs first (the thread's pending head and
        # whether this message is finished), or what a waiter needs (whether it is finished).
        lease = ThreadLease(connection, request.thread_id, holder=process_key())
        acquired, head_id, finished = lease.claim(request.request_id)
        if acquired:
            with _renewing(lease) as done:
                return _drain(connection, events, request, process, head_id, finished, done)
        if finished:
            return _already_finished(connection, events, request)
        if time.monotonic() > deadline:
            raise ThreadBusy(f"thread {request.thread_id} stayed busy for {wait_s:.0f} s")
        time.sleep(POLL_S)


def _drain(
    connection: redis.Redis, events: EventLog, request: ChatRequest, process: Callable[[ChatRequest], None],
    head_id: str | None, finished: bool, done: list[str],
) -> str:
    """Under the lease: earlier messages first, then ``request``. ``done``: ids the lease's release drops
    from the pending list (in the same round trip)."""
    while True:
        if head_id is None or head_id == request.request_id:
            # Our own turn (or the list expired under us): process it and stop.
            if finished:
                return _already_finished(connection, events, request)
            process(request)
            done.append(request.request_id)
            return "processed"
        head = load_request(connection, head_id)
        if head is not None and not is_finished(events, head_id):
            logger.info("processing earlier message %s of thread %s first", head_id, request.thread_id)
            process(head)
        remove_pending(connection, request.thread_id, head_id)
        head_id = pending_head(connection, request.thread_id)
        finished = is_finished(events, request.request_id)


def _already_finished(connection: redis.Redis, events: EventLog, request: ChatRequest) -> str:
    remove_pending(connection, request.thread_id, request.request_id)
    close_stream(events, request.request_id)
    return "already-finished"


def close_stream(events: EventLog, request_id: str) -> None:
    """A finished request whose worker died before its stream's ``done``: send the ``done`` now."""
    channel = request_channel(request_id)
    if "done" not in events.logged_kinds(channel):
        logger.info("request %s finished without closing its stream; closing it", request_id)
        events.publish(channel, "done", {"duration_ms": 0})


@contextmanager
def _renewing(lease: ThreadLease) -> Iterator[list[str]]:
    """Keep the lease alive while the main thread works; release it after, dropping the request ids
    the body put in the yielded list from the thread's pending list first."""
    done: list[str] = []
    try:
        with renewed(lease.extend, lease.ttl_ms / 3000, f"lease {lease.key}"):
            yield done
    finally:
        lease.release(drop_pending=done)
