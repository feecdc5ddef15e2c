"""Mid-turn steering: later messages of the same thread are folded into a running ACT loop.

Between iterations the loop reads its thread's pending list; a message that arrived after the
running one joins the loop ("also add eggs") instead of waiting behind it. Its own stream is
told at once (``status`` stage ``folded``); its ``message``/``done`` and recorded output follow
only after the running turn is committed, so if that turn fails the folded message is still
pending and its own job processes it normally.
"""

from __future__ import annotations

import logging
from typing import Any

import redis

from services.queues import PENDING_KEY, ChatRequest, load_request, remove_pending
from services.streams import EventLog, request_channel
from services.text import as_text

logger = logging.getLogger(__name__)


def later_requests(connection: redis.Redis, events: EventLog, request: ChatRequest, seen: set[str]
                   ) -> list[ChatRequest]:
    """Unfinished messages of ``request``'s thread that arrived after it, not folded yet."""
    ids = [as_text(raw) for raw in connection.lrange(PENDING_KEY % request.thread_id, 0, -1)]
    if request.request_id in ids:
        ids = ids[ids.index(request.request_id) + 1:]
    found = []
    for request_id in ids:
        if request_id in seen or request_id == request.request_id or events.get_output(request_id) is not None:
            continue
        later = load_request(connection, request_id)
        if later is None or later.user_id != request.user_id or later.received_at < request.received_at:
            continue
        found.append(later)
    return found


def announce(events: EventLog, later: ChatRequest, into: ChatRequest) -> None:
    """Tell the folded message's own stream where its answer will come from."""
    events.publish(request_channel(later.request_id), "status",
                   {"stage": "folded", "into": into.request_id, "thread_id": into.thread_id})


def settle(connection: redis.Redis, events: EventLog, folded: list[ChatRequest], into: ChatRequest,
           reply: dict[str, Any]) -> None:
    """After the running turn is stored: close each folded message's stream and unblock its job."""
    for later in folded:
        message = {**reply, "folded_into": into.request_id}
        channel = request_channel(later.request_id)
        events.publish(channel, "message", message)
        events.set_output(later.request_id, {"status": "ok", **message})
        events.publish(channel, "done", {"duration_ms": 0})
        remove_pending(connection, later.thread_id, later.request_id)
        logger.info("message %s was folded into %s", later.request_id, into.request_id)

