"""Firing reminders and scheduled prompts: each due occurrence reaches its owner's /events once.

Exactly once, across crashes, in three steps:

1. **Claim** (one transaction): due active items get this run's ``fire_token`` and
   ``claimed_at``. ``FOR UPDATE SKIP LOCKED`` keeps two concurrent runs off the same item; a
   claim older than ``CLAIM_LEASE_S`` belonged to a run that died, and is claimed again.
2. **Publish** with an idempotency key made of the item id and the occurrence's due time
   (``EventLog.publish_once``: check-and-append is one atomic Redis script). A run that takes
   over a dead run's claim publishes with the same key, so an event that already went out is
   not sent again, and one that never went out is sent now.
3. **Mark** (one transaction, only while this run still holds the token): the next
   recurrence in the person's zone, or ``done``; the token is cleared.

A crash after 1 leaves a claim that expires; after 2, the key stops a second event; after 3,
nothing is due. A scheduled prompt's ACT loop runs before step 2, in the transaction that
stores its reply on the item (and its skills' writes), so a take-over delivers the stored
reply instead of acting twice. A recurring item that was due several times while the system
was down fires once and moves to its next occurrence after now (missed occurrences coalesce).
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from services.act.models import ScheduledItem
from services.act.recurrence import RecurrenceError, next_occurrence
from services.periodic.acting import run_background_turn
from services.reminders import utc_text
from services.service_call import ServiceCall, ServiceResult
from services.streams import user_channel
from services.zones import zone_of

logger = logging.getLogger(__name__)

CLAIM_LEASE_S = 600  # longer than a scheduled prompt's ACT loop and reply
DEFAULT_BATCH = 200
EVENT = "reminder"
KINDS = {"reminder": "reminder", "prompt": "scheduled_prompt"}


def run(call: ServiceCall) -> ServiceResult:
    """Fire what is due at ``call.now()``."""
    now = call.now()
    token = f"{call.fire_id[:40]}:{uuid.uuid4().hex[:16]}"  # unique per attempt, even for a retried fire
    batch = call.option("batch", DEFAULT_BATCH)
    claimed = claim_due(call.context.sessions, now, token, batch)
    if not claimed:
        return ServiceResult.skipped("nothing due")
    fired = {"reminder": 0, "scheduled_prompt": 0}
    failed = 0
    # Reminders first: a slow scheduled prompt must not delay them.
    for item in sorted(claimed, key=lambda item: (item.kind != "reminder", item.due_at, item.id)):
        try:
            kind = deliver(call.context, item, token, now)
        except Exception:  # one bad item must not hold back the others; its claim expires and it is retried
            logger.exception("could not fire scheduled item %s", item.id, extra={"item_id": item.id})
            failed += 1
            continue
        if kind is not None:
            fired[kind] += 1
    result = ServiceResult.ran(due=len(claimed), reminders=fired["reminder"], prompts=fired["scheduled_prompt"],
                               failed=failed)
    if failed and not any(fired.values()):
        return ServiceResult("failed", f"{failed} due item(s) could not be fired; they are retried", result.details)
    return result


def claim_due(sessions: Any, now: dt.datetime, token: str, limit: int) -> list[ScheduledItem]:
    """Step 1: claim up to ``limit`` due items (unclaimed, or claimed by a run that died)."""
    stale = now - dt.timedelta(seconds=CLAIM_LEASE_S)
    with sessions.begin() as session:
        items = list(session.scalars(
            select(ScheduledItem)
            .where(ScheduledItem.status == "active", ScheduledItem.due_at <= now,
                   or_(ScheduledItem.fire_token.is_(None), ScheduledItem.claimed_at < stale))
            .order_by(ScheduledItem.due_at, ScheduledItem.id).limit(limit).with_for_update(skip_locked=True)))
        for item in items:
            item.fire_token, item.claimed_at = token, now
    return items


def deliver(context: Any, item: ScheduledItem, token: str, now: dt.datetime) -> str | None:
    """Steps 2 and 3 for one claimed item; returns the event kind, or None if the claim was lost."""
    kind = KINDS.get(item.kind, "reminder")
    reply = item.pending_reply
    if item.kind == "prompt" and reply is None:
        reply = _answer_prompt(context, item, token, now)
        if reply is None:
            return None
    data: dict[str, Any] = {"id": item.id, "text": item.text, "due_at": utc_text(item.due_at), "kind": kind}
    if reply is not None:
        data["reply"] = reply
    _, fresh = context.events.publish_once(user_channel(item.user_id), EVENT, data, event_key(item))
    if fresh:
        context.metrics.inc("engram_proactive_events_total", {"kind": kind})
    mark_fired(context.sessions, item, token, now)
    logger.info("fired %s %s of %s", kind, item.id, item.user_id, extra={"item_id": item.id, "sent": fresh})
    return kind


def event_key(item: ScheduledItem) -> str:
    """One key per occurrence: the item and the due time it fired for."""
    return f"reminder:{item.id}:{item.due_at.astimezone(dt.UTC):%Y%m%dT%H%M%S}"


def _answer_prompt(context: Any, item: ScheduledItem, token: str, now: dt.datetime) -> str | None:
    """Run the prompt's ACT turn and keep its reply on the item, in one transaction with the skills' writes."""
    with context.sessions.begin() as session:
        if not _still_ours(session, item.id, token):
            return None
        reply = run_background_turn(context, session, request_id=f"scheduled-{event_key(item)}",
                                    user_id=item.user_id, text=item.text, now=now)
        session.execute(update(ScheduledItem).where(ScheduledItem.id == item.id, ScheduledItem.fire_token == token)
                        .values(pending_reply=reply.text))
    return reply.text


def _still_ours(session: Session, item_id: int, token: str) -> bool:
    # No row lock here: the ACT loop may take a minute, and the person's PATCH must not wait for it.
    # The reply is stored only under this token (the UPDATE after the turn): that is the guard.
    held = session.scalar(select(ScheduledItem.id).where(ScheduledItem.id == item_id,
                                                         ScheduledItem.fire_token == token))
    return held is not None


def mark_fired(sessions: Any, item: ScheduledItem, token: str, now: dt.datetime) -> None:
    """Step 3: next occurrence (or done), only while the claim is still this run's."""
    following = next_due(item, now)
    with sessions.begin() as session:
        row = session.scalars(select(ScheduledItem).where(ScheduledItem.id == item.id,
                                                          ScheduledItem.fire_token == token).with_for_update()).first()
        if row is None:
            return  # taken over by another run after our lease; that run marks it
        # Moved or cancelled by the person while it was firing: keep what they set.
        unchanged = row.status == "active" and row.due_at == item.due_at
        if unchanged:
            row.status = "active" if following is not None else "done"
            row.due_at = following or row.due_at
        row.fired_at, row.fire_count, row.updated_at = now, (row.fire_count or 0) + 1, now
        row.fire_token = row.claimed_at = row.pending_reply = None


def next_due(item: ScheduledItem, now: dt.datetime) -> dt.datetime | None:
    """The next occurrence after both the one that fired and now, on the wall clock of the item's zone."""
    if not item.recurrence:
        return None
    zone = zone_of(item.timezone)
    try:
        return next_occurrence(item.recurrence, item.due_at.astimezone(zone), max(item.due_at, now), zone)
    except RecurrenceError:
        logger.warning("scheduled item %s has an unreadable recurrence %r; firing it once", item.id, item.recurrence)
        return None
