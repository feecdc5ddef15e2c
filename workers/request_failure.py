"""A chat request that failed for good: the client is told, the thread goes on. The digest job's RQ failure
callback lives here, apart from the digest, because RQ runs it wherever the failure is noticed: in the
digest worker, or in the scheduler when its janitor hands back a dead worker's job (services/janitor.py).
Importing the digest there loaded its whole tree (LLM client, memory, embeddings' imports: +44 MiB measured,
67.5 -> 111.8 MiB) into a process that never runs a turn; this module needs only the request's stream and
queue keys.
"""

from __future__ import annotations

import logging
from typing import Any

from services.metrics import Metrics
from services.queues import PROMPT_QUEUE, load_request, remove_pending
from services.streams import EventLog, request_channel

logger = logging.getLogger(__name__)

TROUBLE_MESSAGE = "Sorry, something went wrong while I was working on that. Please send it again."


def fail_request(connection: Any, request_id: str) -> None:
    """Tell the client the request failed for good, record it, and unblock its thread."""
    events = EventLog(connection)
    if events.get_output(request_id) is not None:
        return
    channel = request_channel(request_id)
    events.publish(channel, "error", {"message": TROUBLE_MESSAGE, "recoverable": True})
    events.set_output(request_id, {"status": "error", "message": TROUBLE_MESSAGE})
    events.publish(channel, "done", {"duration_ms": 0})
    request = load_request(connection, request_id)
    if request is not None:
        remove_pending(connection, request.thread_id, request_id)
    Metrics(connection).inc("engram_job_failures_total", {"queue": PROMPT_QUEUE})


def on_failure(job: Any, connection: Any, exc_type: Any, exc_value: Any, traceback: Any) -> None:
    """RQ failure callback (also run for abandoned jobs): when no retry is left, fail the request."""
    if job.retries_left:
        return  # RQ will run it again
    request_id = job.args[0] if job.args else None
    if request_id:
        logger.error("request %s failed for good: %s", request_id, exc_value, extra={"request_id": request_id})
        fail_request(connection, request_id)
