"""Experience assimilation: what Engram *did* in ACT turns becomes episodic memory.

Episodes of conversations tell what was talked about; this service adds what was done — a
reminder set, items added to a list, a fact memorised, a goal recorded, and what failed — as an
episode per ACT exchange, so recall can answer "what did you do about the dentist?". Read-only
skills (recall, introspect, associate) are not experiences of their own. The episode's session
id is ``experience-<exchange id>``: the unique (user, session) key makes every exchange
assimilated once, however often the service runs. The episode's embedding is queued for the chunker
worker, which holds the memory graph (the periodic worker does not load it for this).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, exists, func, or_, select

from services.act.compaction import entry_line
from services.db import Exchange, insert
from services.memory.edits import enqueue_embedding
from services.memory.models import Episode
from services.service_call import ServiceCall, ServiceResult
from services.text import truncate

DEFAULT_BATCH = 100
CHANGING_SKILLS = ("memorize", "schedule", "list", "goal", "forget")
SKILL_WORDS = {"memorize": "remembered", "schedule": "scheduling", "list": "lists", "goal": "goals",
               "forget": "forgetting"}
MODEL = "experience"


def session_key(exchange_id: int) -> str:
    return f"experience-{exchange_id}"


def run(call: ServiceCall) -> ServiceResult:
    """Assimilate up to ``batch`` ACT exchanges not assimilated yet, oldest first."""
    context = call.context
    with context.sessions.begin() as session:
        pending = list(session.scalars(pending_query(call.option("batch", DEFAULT_BATCH))))
        stored = [(episode_id, exchange.user_id) for exchange in pending
                  if (episode_id := assimilate(session, exchange)) is not None]
    for episode_id, user_id in stored:
        enqueue_embedding(context.redis, "episode", episode_id, user_id)
    if not pending:
        return ServiceResult.skipped("no new ACT results")
    return ServiceResult.ran(exchanges=len(pending), episodes=len(stored))


def pending_query(limit: int) -> Any:
    """ACT exchanges with at least one state-changing action and no experience episode yet."""
    did_something = or_(*(Exchange.tool_trail.contains([{"type": "action", "skill": skill}])
                          for skill in CHANGING_SKILLS))
    assimilated = exists().where(and_(
        Episode.user_id == Exchange.user_id,
        Episode.session_id == func.concat("experience-", Exchange.id)))
    return select(Exchange).where(did_something, ~assimilated).order_by(Exchange.id).limit(limit)


def assimilate(session: Any, exchange: Exchange) -> int | None:
    """Store the exchange's experience episode (its embedding to follow); its id, or None if another run got there
    first."""
    stored = session.execute(
        insert(Episode).values(user_id=exchange.user_id, session_id=session_key(exchange.id), model=MODEL,
                               **experience_of(exchange))
        .on_conflict_do_nothing(index_elements=["user_id", "session_id"]).returning(Episode.id)).scalar()
    return int(stored) if stored is not None else None


def experience_of(exchange: Exchange) -> dict[str, Any]:
    """The episode fields, written from the tool trail without an LLM call."""
    actions = [entry for entry in exchange.tool_trail or [] if entry.get("type") == "action"
               and entry.get("skill") in CHANGING_SKILLS]
    done = [entry for entry in actions if entry.get("ok")]
    failed = [entry for entry in actions if not entry.get("ok")]
    topics = sorted({SKILL_WORDS.get(str(entry.get("skill")), str(entry.get("skill"))) for entry in actions})
    at = exchange.occurred_at or exchange.created_at
    request = truncate(" ".join(exchange.user_text.split()), 200)
    lines = [f"- {entry_line(entry)}" for entry in actions]
    outcome = f"{len(done)} action(s) done" + (f", {len(failed)} failed" if failed else "")
    return {
        "title": truncate(f"Acted on: {request}", 300),
        "gist": truncate(f"Engram acted ({', '.join(topics)}) when asked: {request}", 600),
        "summary": truncate("\n".join([f"Asked: {request}", *lines, f"Reply: {exchange.reply}"]), 4000),
        "intent": request, "emotion": None, "outcome": outcome,
        "salience": 0.6 if done else 0.4, "open_loops": [],
        "started_at": at, "ended_at": at, "exchange_ids": [exchange.id],
    }
