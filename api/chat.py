"""POST /chat and GET /chat/<request_id>/events: the conversation entry point.

Follow a message from here to ``workers/digest.py``.
"""

from __future__ import annotations

import json
import logging
import queue
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, current_app, request, stream_with_context
from sqlalchemy import select
from sqlalchemy import text as sql_text

from api.args import bounds
from api.auth import current_user, enforce_rate_limit
from services.db import Exchange, Thread, User, insert, relaxed_commit, utcnow
from services.errors import BadRequest, NotFound, PayloadTooLarge, UnsupportedMediaType
from services.queues import ChatRequest, load_request, submit_chat
from services.storable import unstorable_reason
from services.streams import Event, StreamLimits, follow, request_channel
from services.text import as_text

logger = logging.getLogger(__name__)
bp = Blueprint("chat", __name__)

ALLOWED_FIELDS = {"text", "source", "thread_id"}
SOURCES = {"text", "voice"}
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass(frozen=True)
class ChatBody:
    text: str
    source: str
    thread_id: str | None


def parse_chat_body(max_chars: int) -> ChatBody:
    """Validate the request body strictly; every problem is a clear 4xx."""
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("Content-Type must be application/json")
    raw = request.get_data(cache=False)
    try:
        payload = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRequest("body is not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(payload, dict):
        raise BadRequest("body must be a JSON object")
    unknown = sorted(set(payload) - ALLOWED_FIELDS)
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(unknown)}; allowed: text, source, thread_id")
    text = payload.get("text")
    if not isinstance(text, str):
        raise BadRequest("'text' is required and must be a string")
    if not text.strip():
        raise BadRequest("'text' must not be empty or whitespace")
    if len(text) > max_chars:
        raise PayloadTooLarge(f"'text' has {len(text)} characters; the limit is {max_chars}")
    source = payload.get("source", "text")
    if not isinstance(source, str) or source not in SOURCES:
        raise BadRequest("'source' must be 'text' or 'voice'")
    thread_id = payload.get("thread_id")
    if thread_id is not None and (not isinstance(thread_id, str) or not thread_id.strip() or len(thread_id) > 64):
        raise BadRequest("'thread_id' must be a non-empty string of at most 64 characters")
    reason = unstorable_reason(text, "'text'") or unstorable_reason(thread_id, "'thread_id'")
    if reason:
        raise BadRequest(reason)
    return ChatBody(text=text, source=source, thread_id=thread_id)


def resolve_thread(user_id: str, thread_id: str | None) -> str:
    """The thread to post into: the given one (must be the user's), else the current or a new one."""
    deps = current_app.extensions["engram"]
    sessions = current_app.extensions["engram.sessions"]
    current = deps.threads.current_thread(user_id) if thread_id is None else None
    if current is not None:
        # Only Engram writes a user's current thread, under that user's key: it is theirs, and no
        # PostgreSQL round trip stands before the first `status`. The digest job marks it active
        # (and re-creates its row if it was removed meanwhile): services/threads.py, touch_thread.
        return current
    with sessions.begin() as session:
        relaxed_commit(session)  # a last-active time needs no fsync; a new thread is made durable below
        # One statement checks ownership and marks the thread active; someone else's thread looks missing.
        wanted = thread_id
        touched = wanted and session.scalar(
            Thread.__table__.update().where(Thread.id == wanted, Thread.user_id == user_id)
            .values(last_active_at=utcnow()).returning(Thread.id))
        if thread_id is not None and not touched:
            raise NotFound(f"thread {thread_id!r} not found")
        if not touched:
            # A new thread is the only moment the user row must exist (an owned thread implies it).
            session.execute(sql_text("SET LOCAL synchronous_commit TO ON"))  # the exchange will reference it
            session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
            wanted = str(uuid.uuid4())
            session.add(Thread(id=wanted, user_id=user_id, last_active_at=utcnow()))
    deps.threads.set_current_thread(user_id, wanted)
    return str(wanted)


@bp.post("/chat")
def chat() -> Response:
    deps = current_app.extensions["engram"]
    user_id = current_user()
    enforce_rate_limit("chat")
    try:
        body = parse_chat_body(deps.settings.max_text_chars)
    except BadRequest as exc:
        deps.metrics.inc("engram_chat_requests_total", {"outcome": exc.code})
        raise
    thread_id = resolve_thread(user_id, body.thread_id)
    request_id = str(uuid.uuid4())
    chat_request = ChatRequest(request_id, user_id, thread_id, body.text, body.source, time.time())
    channel = request_channel(request_id)
    status = {"stage": "processing", "request_id": request_id, "thread_id": thread_id}
    # Subscribed before anything is logged, so the stream hears every event the worker publishes
    # and never reads the log back for them (services/streams.py, follow).
    wakeups = deps.fanout.subscribe(channel)
    try:
        first = _submit(deps, chat_request, status)
        response = _stream(channel, None, {"X-Request-ID": request_id, "X-Thread-ID": thread_id},
                           first=first, wakeups=wakeups)
    except BaseException:
        deps.fanout.unsubscribe(channel, wakeups)
        raise
    logger.info(
        "chat accepted for thread %s (%d chars)", thread_id, len(body.text),
        extra={"request_id": request_id, "thread_id": thread_id, "user_id": user_id},
    )
    return response


def _submit(deps: Any, chat_request: ChatRequest, status: dict[str, Any]) -> Event:
    """Log the first event, queue the request and count it as accepted: one transaction, one round trip.

    The first event is logged before the job exists, so it always comes first; the counter moves
    only if the request was queued.
    """
    pipe = deps.redis.pipeline(transaction=True)
    pipe.multi()
    deps.events.log_first(pipe, request_channel(chat_request.request_id), "status", status)
    submit_chat(
        deps.redis,
        chat_request,
        ttl_s=deps.settings.events_ttl_s,
        timeout_s=deps.settings.job_timeout_s,
        retries=deps.settings.job_retries,
        pipeline=pipe,
    )
    deps.metrics.inc("engram_chat_requests_total", {"outcome": "accepted"}, pipeline=pipe)
    event_id = pipe.execute()[0]
    return Event(as_text(event_id), "status", status)


@bp.get("/chat/<request_id>/events")
def chat_events(request_id: str) -> Response:
    """Re-attach to a request's stream; replays everything after Last-Event-ID."""
    user_id = current_user()
    if len(request_id) > bounds().max_id_chars or _request_owner(request_id) != user_id:
        raise NotFound(f"request {request_id!r} not found")
    return _stream(request_channel(request_id), requested_last_event_id(), {"X-Request-ID": request_id})


def _request_owner(request_id: str) -> str | None:
    deps = current_app.extensions["engram"]
    pending = load_request(deps.redis, request_id)
    if pending is not None:
        return pending.user_id
    sessions = current_app.extensions["engram.sessions"]
    with sessions() as session:
        return session.scalar(select(Exchange.user_id).where(Exchange.request_id == request_id))


def _stream(channel: str, last_event_id: str | None, headers: dict[str, Any], first: Event | None = None,
            wakeups: queue.Queue[str] | None = None) -> Response:
    deps = current_app.extensions["engram"]
    settings = deps.settings
    limits = StreamLimits(settings.sse_keepalive_s, settings.sse_still_working_s, settings.sse_cap_s)
    frames = follow(deps.events, deps.fanout, channel, last_event_id, limits, check_lost=True, first=first,
                    wakeups=wakeups)
    return sse_response(frames, headers)


def sse_response(frames: Iterator[str], headers: dict[str, Any] | None = None) -> Response:
    """A streaming ``text/event-stream`` response with the headers every Engram stream carries."""
    headers = {**SSE_HEADERS, **(headers or {})}
    return Response(stream_with_context(frames), status=200, mimetype="text/event-stream", headers=headers)


def requested_last_event_id() -> str | None:
    """Where a reconnecting client wants to resume: the Last-Event-ID header (or ?last_event_id=)."""
    last_id = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
    if last_id is not None and len(last_id) > bounds().max_id_chars:
        raise BadRequest(f"Last-Event-ID is longer than {bounds().max_id_chars} characters")
    return last_id
