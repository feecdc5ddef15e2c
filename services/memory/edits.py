"""Embeddings of items edited over REST: the web process loads no model, so a worker computes them."""

from __future__ import annotations

import redis
from sqlalchemy.orm import Session

from services.embeddings import Embedder
from services.memory.episodes import episode_embedding_text
from services.memory.models import Episode, Fact
from services.queues import EMBED_JOB, MEMORY_CHUNKER_QUEUE, enqueue, memory_job_options, owner_meta

MODELS = {"fact": Fact, "episode": Episode}


def enqueue_embedding(connection: redis.Redis, kind: str, item_id: int, user_id: str) -> str | None:
    """Queue the (re)embedding of ``user_id``'s edited fact or episode on the chunker queue."""
    return enqueue(connection, MEMORY_CHUNKER_QUEUE, EMBED_JOB, kind, item_id, job_id=f"embed-{kind}-{item_id}",
                   meta=owner_meta(user_id), **memory_job_options())


def embed_pending(session: Session, embedder: Embedder, kind: str, item_id: int) -> str:
    """Compute the embedding of one fact or episode whose embedding is missing."""
    model = MODELS.get(kind)
    if model is None:
        raise ValueError(f"unknown memory kind {kind!r}")
    item = session.get(model, item_id)
    if item is None:
        return "missing"
    if item.embedding is not None:
        return "exists"
    text = item.text if isinstance(item, Fact) else episode_embedding_text(item)
    item.embedding = embedder.embed(text)
    item.embedding_model = getattr(embedder, "model_id", None)
    return "embedded"
