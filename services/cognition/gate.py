"""Deterministic checks the cognition services make before any LLM call.

"Idle" is asked of RQ itself (``Queue.count`` and ``StartedJobRegistry``): nothing queued or
running on the queues that serve the person (chat and memory), and no other job running on
the background queue. Jobs merely *queued* on the background queue are peers — other
periodic services fired in the same minute — that wait for this one anyway; counting them
would make services fired together skip each other forever. The asking job (a service runs
as an RQ job on the background queue) never counts itself.
"""

from __future__ import annotations

import datetime as dt

import redis
from rq import Queue, get_current_job
from rq.registry import StartedJobRegistry

from services.queues import BACKGROUND_QUEUE, EPISODIC_QUEUE, MEMORY_CHUNKER_QUEUE, PROMPT_QUEUE
from services.zones import zone_of

PERSON_QUEUES = (PROMPT_QUEUE, MEMORY_CHUNKER_QUEUE, EPISODIC_QUEUE)  # queued or running work = busy
PEER_QUEUES = (BACKGROUND_QUEUE,)  # only running work = busy


def busy_queues(connection: redis.Redis) -> str:
    """Why the system is not idle ("" when it is): the queued and running jobs that make it busy."""
    current = get_current_job()
    ignore_job_ids = frozenset({current.id}) if current is not None else frozenset()
    reasons = []
    for name in (*PERSON_QUEUES, *PEER_QUEUES):
        queue = Queue(name, connection=connection)
        queued = queue.count if name in PERSON_QUEUES else 0
        running = set(StartedJobRegistry(queue=queue).get_job_ids()) - ignore_job_ids
        if queued or running:
            reasons.append(f"{name}: {queued} queued, {len(running)} running")
    return "; ".join(reasons)


def in_quiet_hours(now: dt.datetime, zone_name: str | None, start: dt.time, end: dt.time) -> bool:
    """Whether ``now`` falls in [start, end) of the person's local clock (the window may wrap midnight)."""
    if start == end:
        return False
    local = now.astimezone(zone_of(zone_name)).time().replace(tzinfo=None)
    if start < end:
        return start <= local < end
    return local >= start or local < end


def local_day_start(now: dt.datetime, zone_name: str | None) -> dt.datetime:
    """Midnight of the person's current local day, as a UTC instant."""
    zone = zone_of(zone_name)
    local = now.astimezone(zone)
    midnight = dt.datetime.combine(local.date(), dt.time(0), tzinfo=zone)
    return midnight.astimezone(dt.UTC)
