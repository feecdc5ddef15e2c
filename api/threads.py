"""Conversations for the chat page: list a user's threads, page through a thread's exchanges.

Every query is scoped to ``current_user()``; another user's thread answers 404 exactly like a
missing one. Exchanges page backwards from the newest (``?before=<exchange id>``), each with
the receipts of what was remembered for it and, if it asked, the action awaiting a yes/no.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Response, current_app, jsonify
from sqlalchemy import func, select

from api.args import int_arg, sessions
from api.auth import current_user
from services.act.critic import pending_confirmation
from services.db import Exchange, RoutingDecision, Thread, User, insert
from services.errors import NotFound

bp = Blueprint("threads", __name__, url_prefix="/threads")

MAX_PAGE = 100
TITLE_CHARS = 80


@bp.get("")
def list_threads() -> Response:
    """The user's threads, most recently active first (?limit=&offset=)."""
    limit = int_arg("limit", 20, 1, MAX_PAGE)
    offset = int_arg("offset", 0, 0, 10**9)
    user_id = current_user()
    counts = (select(Exchange.thread_id, func.count().label("exchanges"), func.min(Exchange.id).label("first_id"))
              .where(Exchange.user_id == user_id).group_by(Exchange.thread_id).subquery())
    first = select(Exchange.user_text).where(Exchange.id == counts.c.first_id).scalar_subquery()
    statement = (select(Thread, counts.c.exchanges, first.label("title"))
                 .join(counts, counts.c.thread_id == Thread.id, isouter=True)
                 .where(Thread.user_id == user_id)
                 .order_by(Thread.last_active_at.desc(), Thread.id)
                 .limit(limit).offset(offset))
    with sessions()() as session:
        total = session.scalar(select(func.count()).select_from(Thread).where(Thread.user_id == user_id))
        rows = session.execute(statement).all()
    current = current_app.extensions["engram"].threads.current_thread(user_id)
    threads = [_thread_dict(thread, exchanges or 0, title, current) for thread, exchanges, title in rows]
    return jsonify({"threads": threads, "total": total, "limit": limit, "offset": offset})


def _thread_dict(thread: Thread, exchanges: int, title: str | None, current: str | None) -> dict[str, Any]:
    title = " ".join((title or "").split())
    return {
        "id": thread.id,
        "title": (title[: TITLE_CHARS - 1] + "…" if len(title) > TITLE_CHARS else title) or "New conversation",
        "exchanges": exchanges,
        "created_at": thread.created_at.isoformat(),
        "last_active_at": thread.last_active_at.isoformat(),
        "current": thread.id == current,
    }


@bp.post("")
def new_thread() -> tuple[Response, int]:
    """Start an empty conversation and make it the user's current one."""
    user_id = current_user()
    thread_id = str(uuid.uuid4())
    with sessions().begin() as session:
        session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
        session.add(Thread(id=thread_id, user_id=user_id))
        session.flush()
        thread = session.get(Thread, thread_id)
        session.refresh(thread)
        body = _thread_dict(thread, 0, None, thread_id)
    current_app.extensions["engram"].threads.set_current_thread(user_id, thread_id)
    return jsonify(body), 201


@bp.get("/<thread_id>/exchanges")
def thread_exchanges(thread_id: str) -> Response:
    """A page of the thread's exchanges in time order: the newest ``limit`` before ``before``."""
    limit = int_arg("limit", 30, 1, MAX_PAGE)
    before = int_arg("before", None, 1, 2**62)
    user_id = current_user()
    statement = (select(Exchange, RoutingDecision.recalled)
                 .join(RoutingDecision, RoutingDecision.exchange_id == Exchange.id, isouter=True)
                 .where(Exchange.thread_id == thread_id, Exchange.user_id == user_id)
                 .order_by(Exchange.id.desc()).limit(limit + 1))
    if before is not None:
        statement = statement.where(Exchange.id < before)
    with sessions()() as session:
        # Filtered by user in SQL like every statement on a person's rows, not compared afterwards.
        if session.scalar(select(Thread.id).where(Thread.id == thread_id, Thread.user_id == user_id)) is None:
            raise NotFound(f"thread {thread_id!r} not found")
        rows = session.execute(statement).all()
    has_more = len(rows) > limit
    page = [exchange_dict(exchange, recalled) for exchange, recalled in reversed(rows[:limit])]
    return jsonify({"thread_id": thread_id, "exchanges": page, "has_more": has_more,
                    "before": page[0]["id"] if page and has_more else None})


def exchange_dict(exchange: Exchange, recalled: list[dict[str, Any]] | None) -> dict[str, Any]:
    """What the chat page shows of one exchange."""
    return {
        "id": exchange.id,
        "request_id": exchange.request_id,
        "user_text": exchange.user_text,
        "reply": exchange.reply,
        "mode": exchange.mode,
        "topic": exchange.topic,
        "source": exchange.source,
        "tools": [step.get("skill") for step in exchange.tool_trail or [] if step.get("type", "action") == "action"],
        "confirm": pending_confirmation(exchange.tool_trail),
        "recalled": recalled or [],
        "total_tokens": exchange.total_tokens,
        "created_at": exchange.created_at.isoformat(),
    }
