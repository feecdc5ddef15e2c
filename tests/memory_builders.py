"""Keyword-only builders of memory test data (users, threads, sessions, exchanges)."""

from __future__ import annotations

import datetime as dt
import itertools
import random
import uuid

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import ConversationSession, Exchange, Thread, User, insert
from services.embeddings import Embedder
from services.memory.facts import list_facts, remember_fact
from services.memory.from_words import chunk_from_words
from services.memory.models import Fact

_counter = itertools.count(1)


def create_user(session: Session, *, user_id: str = "alice") -> str:
    session.execute(insert(User).values(id=user_id).on_conflict_do_nothing())
    return user_id


def create_thread(session: Session, *, user_id: str = "alice", thread_id: str | None = None) -> str:
    create_user(session, user_id=user_id)
    thread_id = thread_id or f"t-{uuid.uuid4().hex[:12]}"
    session.execute(insert(Thread).values(id=thread_id, user_id=user_id).on_conflict_do_nothing())
    return thread_id


def create_session(session: Session, *, user_id: str = "alice", thread_id: str | None = None, topic: str = "general",
                   ended_at: dt.datetime | None = None, session_id: str | None = None) -> ConversationSession:
    thread_id = create_thread(session, user_id=user_id, thread_id=thread_id)
    row = ConversationSession(id=session_id or f"s-{uuid.uuid4().hex[:12]}", user_id=user_id, thread_id=thread_id,
                              topic=topic, ended_at=ended_at, last_active_at=ended_at or dt.datetime.now(dt.UTC))
    session.add(row)
    session.flush()
    return row


def create_exchange(session: Session, *, user_id: str = "alice", user_text: str = "hello", reply: str = "hi",
                    thread_id: str | None = None, session_id: str | None = None, embedder: Embedder | None = None,
                    occurred_at: dt.datetime | None = None, external_id: str | None = None,
                    mode: str = "RESPOND") -> Exchange:
    thread_id = create_thread(session, user_id=user_id, thread_id=thread_id)
    vector = embedder.embed(f"{user_text}\n{reply}".strip()) if embedder is not None else None
    exchange = Exchange(request_id=f"req-{next(_counter)}-{uuid.uuid4().hex[:8]}", user_id=user_id,
                        thread_id=thread_id, user_text=user_text, reply=reply, mode=mode, session_id=session_id,
                        embedding=vector, embedding_model=getattr(embedder, "model_id", None),
                        occurred_at=occurred_at, external_id=external_id, tool_trail=[], timings={})
    session.add(exchange)
    session.flush()
    return exchange


def facts_after(session: Session, embedder: Embedder, user_id: str, said: tuple[str, ...]) -> list[str]:
    """The person's active facts after each message is stored as an exchange and read as the chunker reads it."""
    for message in said:
        exchange = create_exchange(session, user_id=user_id, user_text=message, reply="Okay, noted.", embedder=embedder)
        for fact in chunk_from_words(message)["facts"]:
            remember_fact(session, embedder, user_id, fact["text"], source_exchange_id=exchange.id)
    return [fact.text for fact in list_facts(session, user_id)]


def unit_vector(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def create_crowding_facts(session: Session, *, near: np.ndarray, user_id: str = "bob", count: int = 300) -> None:
    """Another user's facts, all nearer ``near`` than the test's own, with the HNSW index forced.

    The planner picks the index on a large table; a small test forces it (for this transaction)
    so the user filter runs after the index scan, as it does in production.
    """
    rng = np.random.default_rng(5)
    create_user(session, user_id=user_id)
    session.add_all(Fact(user_id=user_id, text=f"{user_id} fact {n}", speaker="user", confidence=1.0, salience=0.5,
                         embedding=unit_vector(near + 0.05 * unit_vector(rng.standard_normal(near.size))))
                    for n in range(count))
    session.flush()
    session.execute(text("SET LOCAL enable_seqscan = off"))
    session.execute(text("SET LOCAL enable_sort = off"))


WORDS = "apple river mountain coffee piano garden rocket violin castle forest ocean lemon kayak tulip".split()


def people_with_vectors(session: Session, sizes: dict[str, int], near: np.ndarray,
                        crowd: str | None = None) -> dict[str, dict[int, np.ndarray]]:
    """Exchanges of each person (bulk, as an import stores them); ``crowd``'s vectors all lie nearer ``near`` than
    anyone else's. Returns each person's vectors by exchange id."""
    rng, words = np.random.default_rng(3), random.Random(3)
    stored: dict[str, dict[int, np.ndarray]] = {}
    for user, count in sizes.items():
        create_user(session, user_id=user)
        thread = create_thread(session, user_id=user)
        spread = 0.05 if user == crowd else 1.0  # (a dense crowd: few rows, HNSW inserts slow)
        vectors = [unit_vector(near * (user == crowd) + spread * unit_vector(rng.standard_normal(near.size)))
                   for _ in range(count)]
        rows = [{"request_id": f"{user}-{i}", "user_id": user, "thread_id": thread, "mode": "RESPOND",
                 "user_text": " ".join(words.choice(WORDS) for _ in range(5)) + f" {user}{i}", "reply": "noted",
                 "embedding": v, "tool_trail": [], "timings": {}} for i, v in enumerate(vectors)]
        ids = []
        for start in range(0, count, 500):
            ids += session.scalars(insert(Exchange).values(rows[start : start + 500]).returning(Exchange.id)).all()
        stored[user] = dict(zip(ids, vectors, strict=True))
    session.execute(text("ANALYZE exchanges"))
    return stored
