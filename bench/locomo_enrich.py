"""bench.locomo --enrich: what the compact profile's enrichment from words adds to recall on LoCoMo.

Each imported conversation is enriched as the workers do under the compact profile (from the words, no model
call): every exchange gets its chunk (``store_chunk``, its facts through
``remember_fact``, merging and superseding as live facts do) and every session its episode built from the chunks'
gists (``fallback_episode`` → ``store_episode``, as the episode job does from words). Two ways to read a turn:

- ``as-imported``: ``chunk_from_words(exchange.user_text)``, the exchange's first speaker's words said of "the
  user" (what the chunker did before it read named lines);
- ``by-speaker``: ``chunk_from_lines``: each named person's own lines, their facts named for them ("Caroline
  went to a support group"): LoCoMo's two speakers are both people, neither is the account's owner.

Counting stays "what a prompt gets": a fact or an episode takes one slot, the one turn of its source its text was
made from (the best word overlap), never its whole exchange or session.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from services.db import ConversationSession, Exchange
from services.embeddings import Embedder
from services.memory import turns
from services.memory.chunks import store_chunk
from services.memory.config import MemoryConfig
from services.memory.episodes import chunks_for, fallback_episode, store_episode
from services.memory.from_words import chunk_from_lines, chunk_from_words
from services.memory.recall import RecallHit
from services.text import content_words

MODES = ("as-imported", "by-speaker")
MODEL = "words"


@dataclass
class Cost:
    exchanges: int = 0
    chunk_s: float = 0.0
    episode_s: float = 0.0
    rows: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        count = max(1, self.exchanges)
        made = ", ".join(f"{number} {name}" for name, number in sorted(self.rows.items()))
        return (f"enrichment: {self.exchanges} exchanges, {1000 * (self.chunk_s + self.episode_s) / count:.1f} ms an "
                f"exchange (chunks and facts {1000 * self.chunk_s / count:.1f} ms, episodes "
                f"{1000 * self.episode_s / count:.1f} ms); rows: {made}")


def enrich(sessions: sessionmaker[Session], embedder: Embedder, users: list[str], mode: str,
           config: MemoryConfig) -> Cost:
    """Chunks, facts and episodes from words for every exchange of ``users``; what it cost."""
    cost = Cost()
    for user in users:
        with sessions() as session:
            ids = list(session.scalars(select(Exchange.id).where(Exchange.user_id == user)
                                       .order_by(Exchange.occurred_at, Exchange.id)))
            lines = turns.lines_by_exchange(session, user, ids)
        for exchange_id in ids:
            started = time.perf_counter()
            with sessions.begin() as session:
                exchange = session.get(Exchange, exchange_id)
                assert exchange is not None
                chunk = (chunk_from_words(exchange.user_text) if mode == "as-imported" else
                         chunk_from_lines([(line["speaker"], line["text"]) for line in lines.get(exchange_id, [])]))
                stored = store_chunk(session, embedder, exchange, chunk, model=MODEL, facts_config=config.facts)
            cost.chunk_s += time.perf_counter() - started
            cost.exchanges += 1
            cost.rows["chunks"] += 1
            for result in stored.facts if stored else []:
                cost.rows[f"facts {result.action}"] += 1
        started = time.perf_counter()
        with sessions.begin() as session:
            for conversation in session.scalars(select(ConversationSession)
                                                .where(ConversationSession.user_id == user)):
                exchanges = list(session.scalars(select(Exchange).where(Exchange.session_id == conversation.id)
                                                 .order_by(Exchange.occurred_at, Exchange.id)))
                if not exchanges:
                    continue
                episode = fallback_episode(conversation.topic, exchanges,
                                           chunks_for(session, [e.id for e in exchanges]))
                if store_episode(session, embedder, conversation, episode, exchanges, model=MODEL) is not None:
                    cost.rows["episodes"] += 1
        cost.episode_s += time.perf_counter() - started
    return cost


def slots(hit: RecallHit) -> list[str | None]:
    """The turns a hit puts in a prompt: an exchange hit its own; a fact or an episode the one turn of its source
    its text was made from (the best word overlap; none when its source has no lines)."""
    if hit.kind == "exchange":
        return [line["external_id"] for line in hit.lines]
    said = set(content_words(hit.text))
    best: dict[str, Any] | None = max(hit.lines, key=lambda line: len(said & set(content_words(line["text"]))),
                                      default=None)
    return [best["external_id"]] if best is not None else []
