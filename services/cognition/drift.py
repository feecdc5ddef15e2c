"""Cognitive drift: between conversations, one thought about what the person told us recently.

A deterministic gate runs first and no LLM call is made when it says no: the RQ queues must
be idle, the person active in the last days but not in a conversation right now, outside
their quiet hours (their time zone), under the daily cap and the minimum interval, and with
memories newer than their last thought. Then spreading activation over their concept graph
(facts, episodes, topic names) from the new memories' concepts → one LLM thought (JSON,
``prompts/drift.md``) → stored as a drift gist → pushed as a ``thought`` event on their
``GET /events`` when its relevance clears the configured bar. Idempotent per fire: a rerun
finds the gists of its fire and only pushes what was not pushed yet.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from services.cognition.config import DriftConfig, cognition_config
from services.cognition.gate import busy_queues, in_quiet_hours, local_day_start
from services.cognition.models import DriftGist
from services.db import ConversationSession, User, insert
from services.errors import LLMError
from services.memory.concepts import add_topics, build_graph, spread
from services.memory.models import Episode, Fact
from services.service_call import ServiceCall, ServiceResult
from services.streams import user_channel
from services.text import content_words, truncate

logger = logging.getLogger(__name__)

THOUGHT_EVENT = "thought"
MAX_NEW_MEMORIES = 12
MAX_RELATED = 5
EARLIER_THOUGHTS = 3


@dataclass(frozen=True)
class Memory:
    ref: str  # "fact:12" / "episode:3", as the concept graph names its sources
    text: str
    salience: float
    created_at: dt.datetime


@dataclass
class Plan:
    user_id: str
    timezone: str
    memories: list[Memory]


def run(call: ServiceCall) -> ServiceResult:
    """One drift tick: gate, then at most ``max_users_per_run`` thoughts."""
    context = call.context
    config = cognition_config(context).drift
    now = call.now()
    with context.sessions.begin() as db:
        earlier = list(db.scalars(select(DriftGist).where(DriftGist.fire_id == call.fire_id)))
    if earlier:  # a rerun of this fire: nothing new to think, only a push that may not have gone out
        pushed = sum(_push_if_relevant(context, gist, config, now) for gist in earlier)
        return ServiceResult.ran(thoughts=len(earlier), pushed=pushed, rerun=True)
    busy = busy_queues(context.redis)
    if busy:
        return ServiceResult.skipped(f"queues busy: {busy}")
    with context.sessions.begin() as db:
        people = active_people(db, now, config)
        if not people:
            return ServiceResult.skipped(f"nobody active in the last {config.active_within_h:g} h")
        plans, refusals = gate_people(db, people, now, config)
    if not plans:
        return ServiceResult.skipped(_refusal_text(refusals), **dict(refusals))
    return _think_all(call, plans, config, now)


def active_people(db: Session, now: dt.datetime, config: DriftConfig) -> list[tuple[str, str, dt.datetime]]:
    """(user id, time zone, last activity) of people active within the window, most recent first."""
    since = now - dt.timedelta(hours=config.active_within_h)
    last = func.max(ConversationSession.last_active_at)
    rows = db.execute(
        select(ConversationSession.user_id, User.timezone, last)
        .join(User, User.id == ConversationSession.user_id)
        .where(ConversationSession.last_active_at >= since)
        .group_by(ConversationSession.user_id, User.timezone)
        .order_by(last.desc())
    ).all()
    return [(user_id, zone or "UTC", at) for user_id, zone, at in rows]


def gate_people(db: Session, people: list[tuple[str, str, dt.datetime]], now: dt.datetime,
                config: DriftConfig) -> tuple[list[Plan], Counter[str]]:
    """The people a thought may go to now, and why the others may not."""
    plans: list[Plan] = []
    refusals: Counter[str] = Counter()
    for user_id, zone, last_active in people:
        if len(plans) >= config.max_users_per_run:
            break
        why, memories = gate_person(db, user_id, zone, last_active, now, config)
        if why:
            refusals[why] += 1
        else:
            plans.append(Plan(user_id, zone, memories))
    return plans, refusals


def gate_person(db: Session, user_id: str, zone: str, last_active: dt.datetime, now: dt.datetime,
                config: DriftConfig) -> tuple[str, list[Memory]]:
    """Why no thought for this person now ("" when one may come), and the memories to think about."""
    if (now - last_active).total_seconds() < config.conversation_gap_s:
        return "in a conversation", []
    start, end = config.quiet_window()
    if in_quiet_hours(now, zone, start, end):
        return "quiet hours", []
    today = db.scalar(select(func.count()).where(DriftGist.user_id == user_id,
                                                 DriftGist.created_at >= local_day_start(now, zone)))
    if today >= config.daily_cap:
        return "daily cap reached", []
    latest = db.execute(select(DriftGist.created_at, DriftGist.memory_until).where(DriftGist.user_id == user_id)
                        .order_by(DriftGist.created_at.desc()).limit(1)).first()
    if latest is not None and (now - latest.created_at).total_seconds() < config.min_interval_s:
        return "thought recently", []
    since = now - dt.timedelta(hours=config.memory_window_h)
    if latest is not None:
        since = max(since, latest.memory_until)
    memories = new_memories(db, user_id, since)
    if not memories:
        return "nothing new to think about", []
    return "", memories


def new_memories(db: Session, user_id: str, since: dt.datetime) -> list[Memory]:
    """Facts and episodes created after ``since``, most salient first."""
    facts = db.execute(
        select(Fact.id, Fact.text, Fact.salience, Fact.created_at)
        .where(Fact.user_id == user_id, Fact.superseded_at.is_(None), Fact.created_at > since)
        .order_by(Fact.salience.desc(), Fact.created_at.desc()).limit(MAX_NEW_MEMORIES)
    ).all()
    episodes = db.execute(
        select(Episode.id, Episode.title, Episode.gist, Episode.salience, Episode.created_at)
        .where(Episode.user_id == user_id, Episode.created_at > since)
        .order_by(Episode.salience.desc(), Episode.created_at.desc()).limit(MAX_NEW_MEMORIES)
    ).all()
    found = [Memory(f"fact:{row.id}", row.text, row.salience, row.created_at) for row in facts]
    found += [Memory(f"episode:{row.id}", f"{row.title}. {row.gist}".strip(), row.salience, row.created_at)
              for row in episodes]
    found.sort(key=lambda memory: (-memory.salience, -memory.created_at.timestamp()))
    return found[:MAX_NEW_MEMORIES]


def _refusal_text(refusals: Counter[str]) -> str:
    return "; ".join(f"{why} ({count})" for why, count in refusals.most_common())


def _think_all(call: ServiceCall, plans: list[Plan], config: DriftConfig, now: dt.datetime) -> ServiceResult:
    thoughts = pushed = 0
    errors: list[str] = []
    for plan in plans:
        try:
            gist = think(call, plan, config, now)
        except LLMError as exc:  # this person's thought fails; memories stay new for the next tick
            logger.warning("drift for %s failed: %s", plan.user_id, exc)
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        thoughts += 1
        pushed += _push_if_relevant(call.context, gist, config, now)
    if errors and not thoughts:
        return ServiceResult("failed", "; ".join(errors), {"people": len(plans)})
    return ServiceResult.ran(thoughts=thoughts, pushed=pushed, failed=len(errors))


def think(call: ServiceCall, plan: Plan, config: DriftConfig, now: dt.datetime) -> DriftGist:
    """Spread activation from the new memories, ask for one thought, store it as a gist."""
    context = call.context
    with context.sessions.begin() as db:
        material = gather(db, plan, config)
        earlier = list(db.scalars(select(DriftGist.text).where(DriftGist.user_id == plan.user_id,
                                                               DriftGist.text != "")
                                  .order_by(DriftGist.created_at.desc()).limit(EARLIER_THOUGHTS)))
    prompt = context.prompts.render(
        "drift", tz=plan.timezone, now=now,
        new_memories="\n".join(f"- {truncate(memory.text, 300)}" for memory in plan.memories),
        associations=", ".join(f"{item['concept']} ({item['activation']})" for item in material["associations"])
        or "(nothing further)",
        related="\n".join(f"- {truncate(text, 240)}" for text in material["related"]) or "(none)",
        earlier="\n".join(f"- {truncate(text, 240)}" for text in earlier) or "(none)",
    )
    data, completion = context.llm.complete_json("drift", [{"role": "user", "content": prompt}])
    text = str(data.get("thought") or "").strip()
    topic = str(data.get("topic") or "").strip()[:200] or (material["seeds"][0] if material["seeds"] else "")
    values = {
        "user_id": plan.user_id, "fire_id": call.fire_id, "topic": topic, "text": text,
        "relevance": _relevance(data.get("relevance")) if text else 0.0,
        "seeds": material["seeds"], "associations": material["associations"], "sources": material["sources"],
        "memory_until": max(memory.created_at for memory in plan.memories), "model": completion.model,
        "created_at": now,
    }
    with context.sessions.begin() as db:
        db.execute(insert(DriftGist).values(**values).on_conflict_do_nothing(constraint="uq_drift_gists_user_fire"))
        return db.scalars(select(DriftGist).where(DriftGist.user_id == plan.user_id,
                                                  DriftGist.fire_id == call.fire_id)).one()


def gather(db: Session, plan: Plan, config: DriftConfig) -> dict[str, Any]:
    """Seeds from the new memories, what they activate, and older memories behind the strongest concepts."""
    graph = build_graph(db, plan.user_id, config.graph_sources)
    add_topics(graph, db, plan.user_id, config.graph_sources)
    seeds: list[str] = []
    for memory in plan.memories:
        seeds.extend(concept for concept in content_words(memory.text) if concept in graph.sources)
    seeds = list(dict.fromkeys(seeds))[: config.max_seeds]
    activation = spread(graph, seeds, config, config.max_hops) if seeds else {}
    ranked = sorted(activation.items(), key=lambda item: (-item[1], item[0]))[: config.max_associations]
    new_refs = {memory.ref for memory in plan.memories}
    refs = [ref for concept, _ in ranked for ref in graph.sources[concept]
            if ref not in new_refs and not ref.startswith("topic:")]  # a topic's name is no memory to quote
    refs = list(dict.fromkeys(refs))[:MAX_RELATED]
    return {
        "seeds": seeds,
        "associations": [{"concept": concept, "activation": round(energy, 4)} for concept, energy in ranked],
        "related": _texts(db, refs),
        "sources": sorted(new_refs) + refs,
    }


def _texts(db: Session, refs: list[str]) -> list[str]:
    fact_ids = [int(ref.split(":")[1]) for ref in refs if ref.startswith("fact:")]
    episode_ids = [int(ref.split(":")[1]) for ref in refs if ref.startswith("episode:")]
    texts = {f"fact:{row.id}": row.text for row in db.execute(select(Fact.id, Fact.text).where(Fact.id.in_(fact_ids)))}
    texts.update({f"episode:{row.id}": f"{row.title}. {row.gist}" for row in
                  db.execute(select(Episode.id, Episode.title, Episode.gist).where(Episode.id.in_(episode_ids)))})
    return [texts[ref] for ref in refs if ref in texts]


def _relevance(value: Any) -> float:
    """The model's rating as a number in [0, 1]; anything unusable counts as 0 (kept, never pushed)."""
    if isinstance(value, bool):
        return 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return min(max(number, 0.0), 1.0) if number == number else 0.0


def _push_if_relevant(context: Any, gist: DriftGist, config: DriftConfig, now: dt.datetime) -> int:
    """Publish the gist as a ``thought`` event once, when it clears the bar; 1 when it went out now."""
    if gist.pushed_event_id or not gist.text or gist.relevance < config.relevance_bar:
        return 0
    event_id = context.events.publish(user_channel(gist.user_id), THOUGHT_EVENT,
                                      {"id": gist.id, "text": gist.text, "topic": gist.topic})
    with context.sessions.begin() as db:
        db.execute(update(DriftGist).where(DriftGist.id == gist.id).values(pushed_event_id=event_id, pushed_at=now))
    gist.pushed_event_id = event_id
    context.metrics.inc("engram_drift_thoughts_pushed_total")
    return 1
