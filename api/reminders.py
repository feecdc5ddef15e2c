"""Reminders and goals over REST: what the background does for the person, per user.

``/reminders`` reads and writes the same rows as the ``schedule`` skill; ``/goals`` lists what
the goal runner pursues. Another user's id answers 404 exactly like a missing one.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request
from sqlalchemy import select

from api.args import MAX_PAGE, found, json_body, page_args, sessions
from api.auth import current_user
from services import reminders as store
from services.act.models import GOAL_STATES, SCHEDULE_STATUSES, Goal
from services.db import utcnow
from services.errors import BadRequest

bp = Blueprint("reminders", __name__)

CREATE_FIELDS = {"text", "due_at", "recurrence", "kind", "timezone"}
PATCH_FIELDS = {"text", "due_at", "recurrence", "timezone", "status"}


@bp.get("/reminders")
def list_reminders() -> Response:
    """The person's reminders and scheduled prompts; ``?status=active|done|cancelled|all`` (default active),
    ``?limit=`` (at most 200, the default) and ``?offset=``."""
    status = request.args.get("status", "active")
    if status not in (*SCHEDULE_STATUSES, "all"):
        raise BadRequest("'status' is one of active, done, cancelled, all")
    limit, offset = page_args(MAX_PAGE, MAX_PAGE)
    with sessions()() as session:
        items = store.listing(session, current_user(), None if status == "all" else status, limit=limit + 1,
                              offset=offset)
        return jsonify({"reminders": [store.to_dict(item) for item in items[:limit]], "limit": limit,
                        "offset": offset, "has_more": len(items) > limit})


@bp.post("/reminders")
def create_reminder() -> tuple[Response, int]:
    body = json_body(CREATE_FIELDS)
    with sessions().begin() as session:
        try:
            item = store.create(session, current_user(), body, utcnow())
        except store.ReminderInvalid as exc:
            raise BadRequest(str(exc)) from None
        created = store.to_dict(item)
    return jsonify(created), 201


def _owned(session: Any, item_id: int) -> Any:
    return found(store.owned(session, current_user(), item_id), f"reminder {item_id}")


@bp.get("/reminders/<row_id:item_id>")
def get_reminder(item_id: int) -> Response:
    with sessions()() as session:
        return jsonify(store.to_dict(_owned(session, item_id)))


@bp.patch("/reminders/<row_id:item_id>")
def edit_reminder(item_id: int) -> Response:
    with sessions().begin() as session:
        # Whose row first: another user's id is a 404 whatever the body says, exactly like a missing one.
        item = _owned(session, item_id)
        body = json_body(PATCH_FIELDS)
        try:
            store.update_item(item, body, utcnow())
        except store.ReminderInvalid as exc:
            raise BadRequest(str(exc)) from None
        session.flush()
        return jsonify(store.to_dict(item))


@bp.delete("/reminders/<row_id:item_id>")
def delete_reminder(item_id: int) -> Response:
    with sessions().begin() as session:
        session.delete(_owned(session, item_id))
    return jsonify({"deleted": item_id})


@bp.get("/goals")
def list_goals() -> Response:
    """The person's goals with their latest progress; ``?state=active|paused|done|abandoned``, ``?limit=``
    (at most 200, the default) and ``?offset=``."""
    query = select(Goal).where(Goal.user_id == current_user())
    state = request.args.get("state")
    if state:
        if state not in GOAL_STATES:
            raise BadRequest(f"'state' is one of {', '.join(GOAL_STATES)}")
        query = query.where(Goal.state == state)
    limit, offset = page_args(MAX_PAGE, MAX_PAGE)
    with sessions()() as session:
        goals = list(session.scalars(query.order_by(Goal.state, Goal.updated_at.desc(), Goal.id)
                                     .limit(limit + 1).offset(offset)))
        return jsonify({"goals": [goal_to_dict(goal) for goal in goals[:limit]], "limit": limit, "offset": offset,
                        "has_more": len(goals) > limit})


def goal_to_dict(goal: Goal) -> dict[str, Any]:
    return {"id": goal.id, "text": goal.text, "state": goal.state, "progress": list(goal.progress or []),
            "created_at": store.utc_text(goal.created_at) if goal.created_at else None,
            "updated_at": store.utc_text(goal.updated_at) if goal.updated_at else None}
