"""Autobiography: the person's narrative, synthesised by the LLM from their episodes.

Every run looks for people with episodes newer than their last narrative (no LLM call for
anyone else), and for each rewrites the narrative from the previous one plus the newest
episodes (``prompts/autobiography.md``). Narratives are stored as versions
(``autobiographies``); the newest goes into the full profile's mode prompts through context assembly
(``services/memory/context.py``). The compact prompts (the small local model) read no narrative, so under that
profile the service makes no model call at all. Idempotent per fire: a person already written in this fire
is skipped.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.cognition.config import AutobiographyConfig, cognition_config
from services.cognition.models import Autobiography, latest_autobiography
from services.db import User, insert
from services.errors import LLMError
from services.memory.models import Episode
from services.service_call import ServiceCall, ServiceResult
from services.text import truncate

logger = logging.getLogger(__name__)

WORDS_PER_CHAR = 1 / 6  # a rough English average, to turn the character cap into a word budget
NO_STORY = "(nothing yet: this is the first time you write it)"


def run(call: ServiceCall) -> ServiceResult:
    """Rewrite the narrative of each person with new episodes (at most ``max_users_per_run``)."""
    context = call.context
    if context.settings.compact_prompts:  # a rewrite every 6 h per person, on the one local model, read by nothing
        return ServiceResult.skipped("the compact prompts read no narrative")
    config = cognition_config(context).autobiography
    now = call.now()
    with context.sessions.begin() as db:
        people = people_with_new_episodes(db, call.fire_id, config)
    if not people:
        return ServiceResult.skipped("no new episodes")
    written = 0
    errors: list[str] = []
    for user_id in people:
        try:
            written += synthesise(context, call.fire_id, user_id, config, now)
        except LLMError as exc:
            logger.warning("autobiography for %s failed: %s", user_id, exc)
            errors.append(f"{type(exc).__name__}: {exc}")
    if errors and not written:
        return ServiceResult("failed", "; ".join(errors[:3]), {"people": len(people)})
    return ServiceResult.ran(written=written, failed=len(errors))


def people_with_new_episodes(db: Session, fire_id: str, config: AutobiographyConfig) -> list[str]:
    """People whose newest episodes came after their newest narrative, not yet written in this fire."""
    last_story = (select(Autobiography.user_id, func.max(Autobiography.episodes_until).label("until"))
                  .group_by(Autobiography.user_id).subquery())
    done_now = select(Autobiography.user_id).where(Autobiography.fire_id == fire_id)
    new_count = func.count(Episode.id)
    rows = db.execute(
        select(Episode.user_id)
        .join(User, User.id == Episode.user_id)
        .outerjoin(last_story, last_story.c.user_id == Episode.user_id)
        .where((last_story.c.until.is_(None)) | (Episode.created_at > last_story.c.until),
               Episode.user_id.not_in(done_now))
        .group_by(Episode.user_id)
        .having(new_count >= config.min_new_episodes)
        .order_by(func.max(Episode.created_at).desc())
        .limit(config.max_users_per_run)
    ).all()
    return [user_id for (user_id,) in rows]


def synthesise(context: Any, fire_id: str, user_id: str, config: AutobiographyConfig, now: dt.datetime) -> int:
    """One narrative for one person; 1 when stored."""
    with context.sessions.begin() as db:
        previous = latest_autobiography(db, user_id)
        since = previous.episodes_until if previous is not None else None
        episodes = new_episodes(db, user_id, since, config.max_episodes)
    if not episodes:
        return 0
    prompt = context.prompts.render(
        "autobiography", now=now, max_words=max(40, int(config.max_chars * WORDS_PER_CHAR)),
        narrative=previous.narrative if previous is not None else NO_STORY,
        episodes="\n".join(episode_line(episode) for episode in episodes),
    )
    completion = context.llm.complete("autobiography", [{"role": "user", "content": prompt}])
    narrative = truncate(" ".join(completion.text.split()), config.max_chars)
    with context.sessions.begin() as db:
        db.execute(insert(Autobiography).values(
            user_id=user_id, fire_id=fire_id, narrative=narrative, episode_ids=[e.id for e in episodes],
            episodes_until=max(e.created_at for e in episodes), model=completion.model, created_at=now,
        ).on_conflict_do_nothing(constraint="uq_autobiographies_user_fire"))
    return 1


def new_episodes(db: Session, user_id: str, since: dt.datetime | None, limit: int) -> list[Episode]:
    """The newest ``limit`` episodes after ``since``, oldest first (the order the story is told in)."""
    statement = select(Episode).where(Episode.user_id == user_id)
    if since is not None:
        statement = statement.where(Episode.created_at > since)
    newest = list(db.scalars(statement.order_by(Episode.created_at.desc(), Episode.id.desc()).limit(limit)))
    return newest[::-1]


def episode_line(episode: Episode) -> str:
    when = (episode.ended_at or episode.created_at).date().isoformat()
    parts = [f"- {when}: {episode.title}. {truncate(episode.gist or episode.summary, 300)}"]
    if episode.outcome:
        parts.append(f"Outcome: {truncate(episode.outcome, 160)}.")
    if episode.open_loops:
        parts.append("Still open: " + truncate("; ".join(map(str, episode.open_loops)), 160) + ".")
    return " ".join(parts)
