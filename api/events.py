"""GET /events: the user's proactive stream (drift thoughts, reminders, goal results)."""

from __future__ import annotations

import itertools

from flask import Blueprint, Response, current_app

from api.auth import current_user
from api.chat import requested_last_event_id, sse_response
from services.streams import StreamLimits, follow, user_channel

bp = Blueprint("events", __name__)
OPENING_COMMENT = ": connected\n\n"


@bp.get("/events")
def events() -> Response:
    deps = current_app.extensions["engram"]
    user_id = current_user()
    # No cap and no terminal event: the stream stays open, kept alive by comments. Pub/sub wakes it
    # (and the fan-out wakes every stream after a reconnect), so the log is re-read only at keepalive
    # time as a safety net: a thousand idle streams cost a thousand reads per keepalive, not per second.
    keepalive_s = deps.settings.sse_keepalive_s
    limits = StreamLimits(keepalive_s=keepalive_s, still_working_s=float("inf"), cap_s=None, poll_s=keepalive_s)
    frames = follow(deps.events, deps.fanout, user_channel(user_id), requested_last_event_id(), limits,
                    terminal_event=None)
    # The server sends the response headers with the first body bytes; without an opening comment a
    # quiet stream would leave the client waiting for them until the first keepalive.
    return sse_response(itertools.chain([OPENING_COMMENT], frames))
