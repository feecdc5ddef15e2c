"""Episodes: one closed session told as a story (title, gist, summary, intent, emotion, outcome,
salience 0–1, open loops, time span, exchange ids), embedded and full-text indexed."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from services.db import ConversationSession, Exchange, insert
from services.embeddings import Embedder
from services.memory.chunks import ChunkInvalid, string_list, unit_interval
from services.memory.facts import clean_text
from services.memory.models import Episode, MemoryChunk, iso

EDITABLE = {"title": 300, "gist": 600, "summary": 4000, "intent": 300, "emotion": 100, "outcome": 600}
EPISODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"}, "gist": {"type": "string"}, "summary": {"type": "string"},
        "intent": {"type": "string"}, "emotion": {"type": "string"}, "outcome": {"type": "string"},
        "salience": {"type": "number"}, "open_loops": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "gist", "summary", "intent", "emotion", "outcome", "salience", "open_loops"],
}


def exchange_time(exchange: Exchange) -> dt.datetime:
    return exchange.occurred_at or exchange.created_at


def session_exchanges(session: Session, session_id: str) -> list[Exchange]:
    """The session's exchanges in the order they happened."""
    time = func.coalesce(Exchange.occurred_at, Exchange.created_at)
    return list(session.scalars(select(Exchange).where(Exchange.session_id == session_id).order_by(time, Exchange.id)))


def chunks_for(session: Session, exchange_ids: list[int]) -> dict[int, MemoryChunk]:
    """Chunk rows (ok or failed) of the given exchanges, by exchange id."""
    if not exchange_ids:
        return {}
    rows = session.scalars(select(MemoryChunk).where(MemoryChunk.exchange_id.in_(exchange_ids)))
    return {row.exchange_id: row for row in rows}


def validate_episode(data: Any) -> dict[str, Any]:
    """The normalised episode, or ``ChunkInvalid`` naming the first problem."""
    if not isinstance(data, dict):
        raise ChunkInvalid("an episode must be a JSON object")
    episode: dict[str, Any] = {}
    for name, limit in EDITABLE.items():
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise ChunkInvalid(f"{name} must be a string")
        episode[name] = clean_text(value or "", limit)
    if not episode["title"]:
        raise ChunkInvalid("an episode needs a title")
    episode["salience"] = unit_interval(data.get("salience"), "salience")
    episode["open_loops"] = string_list(data.get("open_loops") or [], "open_loops")
    return episode


def fallback_episode(topic: str, exchanges: list[Exchange], chunks: dict[int, MemoryChunk]) -> dict[str, Any]:
    """An episode built from the chunks alone, when the LLM gave no usable answer."""
    gists = [g for e in exchanges for g in ((chunks.get(e.id) and (chunks[e.id].chunk or {}).get("gists")) or [])]
    lines = gists or [clean_text(e.user_text, 160) for e in exchanges if e.user_text.strip()]
    saliences = [c.salience for c in chunks.values() if c.salience is not None]
    loops = [loop for c in chunks.values() for loop in ((c.chunk or {}).get("open_loops") or [])]
    emotions = [(c.chunk or {}).get("emotion") for c in chunks.values() if c.chunk]
    return {
        "title": clean_text(f"Conversation about {topic}", 300),
        "gist": clean_text(lines[0] if lines else topic, 600),
        "summary": clean_text(" ".join(lines), 4000),
        "intent": "", "emotion": clean_text(emotions[-1] if emotions else "", 100), "outcome": "",
        "salience": max(saliences) if saliences else 0.5,
        "open_loops": list(dict.fromkeys(loops))[:12],
    }


def episode_embedding_text(episode: dict[str, Any] | Episode) -> str:
    get = episode.get if isinstance(episode, dict) else lambda key, default="": getattr(episode, key) or default
    return ". ".join(part for part in (get("title", ""), get("gist", ""), get("summary", "")) if part)


def store_episode(session: Session, embedder: Embedder | None, conversation: ConversationSession,
                  episode: dict[str, Any], exchanges: list[Exchange], *, model: str | None) -> int | None:
    """Insert the episode; None when the session already has one (a retried job)."""
    vector = embedder.embed(episode_embedding_text(episode)) if embedder is not None else None
    times = [exchange_time(e) for e in exchanges]
    return session.scalar(
        insert(Episode)
        .values(user_id=conversation.user_id, session_id=conversation.id, **episode,
                started_at=min(times) if times else conversation.started_at,
                ended_at=max(times) if times else conversation.ended_at,
                exchange_ids=[e.id for e in exchanges], embedding=vector,
                embedding_model=getattr(embedder, "model_id", None), model=model)
        .on_conflict_do_nothing(index_elements=["user_id", "session_id"])
        .returning(Episode.id)
    )


def episode_exists(session: Session, user_id: str, session_id: str) -> bool:
    statement = select(Episode.id).where(Episode.user_id == user_id, Episode.session_id == session_id)
    return session.scalar(statement) is not None


def list_episodes(session: Session, user_id: str, *, limit: int | None = None, offset: int = 0) -> list[Episode]:
    """The user's episodes, most recent first."""
    statement = (select(Episode).where(Episode.user_id == user_id)
                 .order_by(func.coalesce(Episode.ended_at, Episode.created_at).desc(), Episode.id.desc())
                 .offset(offset))
    if limit is not None:
        statement = statement.limit(limit)
    return list(session.scalars(statement))


def get_episode(session: Session, user_id: str, episode_id: int) -> Episode | None:
    return session.scalars(select(Episode).where(Episode.user_id == user_id, Episode.id == episode_id)).first()


def delete_episode(session: Session, user_id: str, episode_id: int) -> bool:
    result = session.execute(delete(Episode).where(Episode.user_id == user_id, Episode.id == episode_id))
    return bool(result.rowcount)


def update_episode(episode: Episode, changes: dict[str, Any]) -> bool:
    """Apply edits (validated); True when the text changed, so the embedding must be recomputed."""
    text_changed = False
    for name, value in changes.items():
        if name in EDITABLE:
            if not isinstance(value, str) or (name == "title" and not value.strip()):
                raise ValueError(f"{name} must be a string" + (" (not empty)" if name == "title" else ""))
            text_changed = text_changed or name in ("title", "gist", "summary")
            setattr(episode, name, clean_text(value, EDITABLE[name]))
        elif name == "salience":
            try:
                episode.salience = unit_interval(value, "salience")
            except ChunkInvalid as exc:
                raise ValueError(str(exc)) from None
        elif name == "open_loops":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ValueError("open_loops must be a list of strings")
            episode.open_loops = [clean_text(item, 300) for item in value if item.strip()]
        else:
            raise ValueError(f"unknown or read-only field {name!r}")
    if text_changed:
        episode.embedding = None
    return text_changed


def episode_to_dict(episode: Episode) -> dict[str, Any]:
    """JSON-ready episode (no embedding)."""
    return {
        "id": episode.id, "session_id": episode.session_id, "title": episode.title, "gist": episode.gist,
        "summary": episode.summary, "intent": episode.intent, "emotion": episode.emotion, "outcome": episode.outcome,
        "salience": episode.salience, "open_loops": list(episode.open_loops or []),
        "started_at": iso(episode.started_at), "ended_at": iso(episode.ended_at),
        "exchange_ids": list(episode.exchange_ids or []), "access_count": episode.access_count,
        "last_accessed_at": iso(episode.last_accessed_at), "created_at": iso(episode.created_at),
        "embedded": episode.embedding is not None, "model": episode.model,
    }
