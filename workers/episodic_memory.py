"""Episodic memory (episodic-memory-queue): one job per closed or quiet session.

Waits until every exchange of the session has its chunk (re-enqueueing itself with backoff via
``enqueue_in``; the scheduler role moves those onto the queue when due), proceeds with what
exists once the deadline after the session's end has passed, asks the ``episodic_memory`` LLM
role for the episode as JSON, and stores it embedded. Unusable LLM output → an episode built
from the chunks, so a finished session always becomes an episode. Idempotent per session.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from services.db import ConversationSession, Exchange
from services.errors import LLMError, LLMMalformedOutput
from services.llm.completion import Completion
from services.memory.chunks import ChunkInvalid, ask_validated
from services.memory.config import MemoryConfig
from services.memory.episodes import (
    EPISODE_SCHEMA,
    chunks_for,
    episode_exists,
    exchange_time,
    fallback_episode,
    session_exchanges,
    store_episode,
    validate_episode,
)
from services.memory.models import MemoryChunk
from services.queues import EPISODE_JOB, EPISODIC_QUEUE
from workers.context import WorkerContext, memory_config
from workers.memory_chunker import FAILURES_METRIC, WORDS_MODEL, ensure_embedder, reschedule, words_only
from workers.process import current_context

logger = logging.getLogger(__name__)

PROMPT = "episodic-memory"
ROLE = "episodic_memory"


def run(session_id: str, attempt: int = 0, first_seen: float | None = None) -> str:
    """RQ entry point; returns what happened (stored, exists, waiting, retrying, empty, missing).

    Args:
        first_seen: unix time of the first attempt (the wait's deadline counts from it or the session's end,
            whichever is later, so an imported session that ended long ago still waits for its chunks).
    """
    context = current_context()
    first_seen = first_seen or time.time()
    config = memory_config(context)
    with context.sessions() as session:
        conversation = session.get(ConversationSession, session_id)
        if conversation is None:
            return "missing"
        if episode_exists(session, conversation.user_id, session_id):
            return "exists"
        exchanges = session_exchanges(session, session_id)
        if not exchanges:
            return "empty"
        chunks = chunks_for(session, [e.id for e in exchanges])
    missing = [e.id for e in exchanges if e.id not in chunks]
    if missing and not past_deadline(conversation, attempt, config, first_seen):
        if reschedule(context, EPISODIC_QUEUE, EPISODE_JOB, session_id, attempt, config.episodic.backoff_s,
                      f"episode-{session_id}", user_id=conversation.user_id, first_seen=first_seen):
            logger.info("session %s: %d of %d chunks missing; waiting", session_id, len(missing), len(exchanges))
            return "waiting"
    if missing:
        logger.warning("session %s: proceeding without %d chunk(s) after the deadline", session_id, len(missing))
    episode, model = _compose(context, conversation, exchanges, chunks, config, attempt, first_seen)
    if episode is None:
        return "retrying"
    embedder = ensure_embedder(context)
    with context.sessions.begin() as session:
        episode_id = store_episode(session, embedder, conversation, episode, exchanges, model=model)
    if episode_id is None:
        return "exists"
    # The title is the person's words: not at INFO (logs hold no message text).
    logger.info("session %s became episode %s", session_id, episode_id,
                extra={"session_id": session_id, "episode_id": episode_id})
    return "stored"


def past_deadline(conversation: ConversationSession, attempt: int, config: MemoryConfig, first_seen: float) -> bool:
    """True once ``deadline_s`` has passed since the session ended and the job first ran (or backoff is used up)."""
    if attempt >= len(config.episodic.backoff_s):
        return True
    ended = conversation.ended_at or conversation.last_active_at
    start = max(ended.timestamp() if ended else 0.0, first_seen)
    return time.time() - start >= config.episodic.deadline_s


def _compose(context: WorkerContext, conversation: ConversationSession, exchanges: list[Exchange],
             chunks: dict[int, MemoryChunk], config: MemoryConfig, attempt: int,
             first_seen: float) -> tuple[dict[str, Any] | None, str | None]:
    """The episode from the LLM, or built from the chunks when its output is unusable (None: retry later) or
    when the profile enriches from words."""
    if words_only(context):
        return fallback_episode(conversation.topic, exchanges, chunks), WORDS_MODEL
    messages = build_messages(context, conversation, exchanges, chunks, config)
    try:
        episode, completion = ask_episode(context, messages, config)
        return episode, completion.model
    except (LLMMalformedOutput, ChunkInvalid) as exc:
        reason, detail = "invalid_json", str(exc)
    except LLMError as exc:
        if reschedule(context, EPISODIC_QUEUE, EPISODE_JOB, conversation.id, attempt, config.episodic.backoff_s,
                      f"episode-{conversation.id}", user_id=conversation.user_id, first_seen=first_seen):
            return None, None
        reason, detail = "llm_unavailable", str(exc)
    context.metrics.inc(FAILURES_METRIC, {"stage": "episodic", "reason": reason})
    logger.warning("session %s: episode built from chunks only (%s): %s", conversation.id, reason, detail,
                   extra={"session_id": conversation.id, "reason": reason})
    return fallback_episode(conversation.topic, exchanges, chunks), "fallback"


def ask_episode(context: WorkerContext, messages: list[dict[str, Any]],
                config: MemoryConfig) -> tuple[dict[str, Any], Completion]:
    """The validated episode (one corrective retry on a wrong shape)."""
    schema = EPISODE_SCHEMA if config.episodic.send_schema else None
    return ask_validated(context.llm, ROLE, messages, schema, validate_episode)


def build_messages(context: WorkerContext, conversation: ConversationSession, exchanges: list[Exchange],
                   chunks: dict[int, MemoryChunk], config: MemoryConfig) -> list[dict[str, Any]]:
    shown = exchanges[-config.episodic.max_exchanges:]
    transcript = "\n".join(f"[{exchange_time(e).isoformat(timespec='minutes')}] User: {e.user_text}\n"
                           f"Assistant: {e.reply}" for e in shown)
    notes = []
    for exchange in shown:
        chunk = chunks.get(exchange.id)
        if chunk is not None and chunk.chunk:
            data = chunk.chunk
            loops = "; ".join(data.get("open_loops") or []) or "none"
            notes.append(f"- {' '.join(data.get('gists') or [])} (emotion: {data.get('emotion')}; open: {loops})")
    times = [exchange_time(e) for e in exchanges]
    system = context.prompts.render(
        PROMPT, topic=conversation.topic, started=min(times).isoformat(timespec="minutes"),
        ended=max(times).isoformat(timespec="minutes"), notes="\n".join(notes) or "(no notes)", transcript=transcript)
    return [{"role": "system", "content": system}, {"role": "user", "content": "Write the episode as JSON."}]
