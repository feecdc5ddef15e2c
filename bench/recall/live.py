"""``python -m bench.recall enrich``: recall as a live user meets it: an exchange stored between two recalls, over an
enriched history.

Run from the repository root, on a copy of a database ``python -m bench.recall --pgdata DIR`` built (both write):
    python -m bench.recall enrich --pgdata DIR      # add what enrichment writes, once
    python -m bench.recall pair --pgdata DIR --a TREE_A --b TREE_B --live [--mode embed|given]

The scale mode recalls over a static, un-enriched history. A person chatting stores an exchange between two
recalls (the digest's store, then the chunker job's lines, vectors and words), and enrichment writes, per
exchange, what the LLM read of it. Both change what recall reads: the person's turn count moves at every
recall (``termcounts`` versions its counts by it), new words reach the vocabulary (``vocabmatrix`` versions its
matrix by their count), and window_rows joins each exchange's ``memory_chunks`` row (salience, access).

``enrich``: for every exchange without one, a ``memory_chunks`` row (``chunks.store_chunk``: the chunker writes
one per exchange, ok or failed) whose chunk holds one user fact in ``FACT_EVERY`` exchanges (stored through
``facts.remember_fact``, so it merges and supersedes as live facts do; most chat turns carry no lasting fact
about the person), and an episode per conversation session (``episodes.store_episode``: the episode job writes
one per closed session). Texts are the turns' own sentences, vectors the real model's (embedded in batches, the
same vectors the model code would compute one by one).

``LiveWriter`` (used by ``pair --live``) stores one exchange as a chat turn is stored: the digest's lean
INSERT (workers/digest.py's statement, no lines, no vector), the chunker job's first transaction
(``vectors.fill_exchange``: lines, thread positions, the turn's vector) and its merge of the lines' pending
full-text entries (``vectors.merge_pending_lines``), with an enriched database its chunk and facts, then the
vocabulary backfill (``vocabulary.fill_all``: the job runs while turns wait, here after every turn, the most often
the vocabulary can change).

How to read it: the paired median and the CPU per recall are the figures that compare two trees on a shared box;
the measured rounds are in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import time
import uuid
from types import SimpleNamespace
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from bench.chatgen import TOPICS, ChatGen
from bench.recall import USER, built_database, database
from services.memory import vectors, vocabulary
from services.memory.chunks import store_chunk, validate_chunk
from services.memory.episodes import store_episode, validate_episode

FACT_EVERY = 3  # one exchange in three states a lasting fact about the person (the rest: none)
BATCH = 2000  # exchanges enriched per transaction
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
LIVE_THREAD = "bench-live"


class Precomputed:
    """An embedder answering from vectors computed beforehand in one batch (the model's own, text by text)."""

    def __init__(self, embedder: Any, texts: list[str]) -> None:
        self.model_id, self.dim = embedder.model_id, embedder.dim
        unique = list(dict.fromkeys(texts))
        self._vectors = dict(zip(unique, embedder.embed_many(unique), strict=True)) if unique else {}

    def embed(self, value: str) -> np.ndarray:
        return self._vectors[value]

    def embed_many(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        return np.stack([self._vectors[value] for value in texts])


def first_sentence(value: str) -> str:
    found = _SENTENCE.search(value or "")
    return (found.group(0) if found else value or "").strip()


def chunk_of(user_text: str, reply: str, rng: random.Random, with_fact: bool) -> dict[str, Any]:
    """A chunk as the chunker's LLM writes one (validated by the same code): gists from the turns, a user fact
    (the person's first sentence) when ``with_fact``."""
    facts = [{"text": first_sentence(user_text), "speaker": "user", "confidence": 0.9}] if with_fact else []
    return validate_chunk({
        "gists": [first_sentence(user_text) or first_sentence(reply)], "facts": facts,
        "entities": [], "emotion": rng.choice(["neutral", "happy", "worried", "excited"]),
        "salience": round(rng.uniform(0.2, 0.9), 2), "open_loops": [],
    })


def _fact_texts(chunks: list[dict[str, Any]]) -> list[str]:
    return [fact["text"] for chunk in chunks for fact in chunk["facts"]]


def enrich_chunks(sessions: sessionmaker[Session], embedder: Any) -> tuple[int, int]:
    """A chunk for every exchange of ``USER`` without one (and its facts); returns (chunks, facts stored)."""
    rng, chunks_done, facts_done, after = random.Random(3), 0, 0, 0
    while True:
        with sessions.begin() as session:
            rows = session.execute(text(
                "SELECT e.id, e.user_id, e.session_id, e.user_text, e.reply FROM exchanges e WHERE e.user_id = :u "
                "AND e.id > :after AND NOT EXISTS (SELECT 1 FROM memory_chunks c WHERE c.exchange_id = e.id) "
                "ORDER BY e.id LIMIT :n"), {"u": USER, "after": after, "n": BATCH}).all()
            if not rows:
                return chunks_done, facts_done
            chunks = [chunk_of(row.user_text or "", row.reply or "", rng, row.id % FACT_EVERY == 0) for row in rows]
            model = Precomputed(embedder, _fact_texts(chunks))
            for row, chunk in zip(rows, chunks, strict=True):
                exchange = SimpleNamespace(id=row.id, user_id=row.user_id, session_id=row.session_id)
                stored = store_chunk(session, model, exchange, chunk, model="bench")  # type: ignore[arg-type]
                chunks_done += stored is not None
                facts_done += len(stored.facts) if stored is not None else 0
            after = rows[-1].id


def enrich_episodes(sessions: sessionmaker[Session], embedder: Any) -> int:
    """An episode for every session of ``USER`` without one, told from its exchanges' chunks' gists."""
    with sessions.begin() as session:
        found = session.execute(text(
            "SELECT s.id, s.user_id, s.topic, s.started_at, s.ended_at, array_agg(e.id ORDER BY e.id) AS ids, "
            "array_agg(coalesce(e.occurred_at, e.created_at) ORDER BY e.id) AS times, "
            "array_agg(c.chunk->'gists'->>0 ORDER BY e.id) AS gists FROM sessions s "
            "JOIN exchanges e ON e.session_id = s.id LEFT JOIN memory_chunks c ON c.exchange_id = e.id "
            "WHERE s.user_id = :u AND NOT EXISTS (SELECT 1 FROM episodes p WHERE p.session_id = s.id) "
            "GROUP BY s.id"), {"u": USER}).all()
        episodes = [validate_episode({
            "title": f"Conversation about {row.topic}", "gist": next((g for g in row.gists if g), row.topic),
            "summary": " ".join(g for g in row.gists[:6] if g), "salience": 0.5}) for row in found]
        from services.memory.episodes import episode_embedding_text

        model = Precomputed(embedder, [episode_embedding_text(episode) for episode in episodes])
        for row, episode in zip(found, episodes, strict=True):
            conversation = SimpleNamespace(id=row.id, user_id=row.user_id, started_at=row.started_at,
                                           ended_at=row.ended_at)
            exchanges = [SimpleNamespace(id=i, occurred_at=at, created_at=at)
                         for i, at in zip(row.ids, row.times, strict=True)]
            store_episode(session, model, conversation, episode, exchanges, model="bench")  # type: ignore[arg-type]
    return len(found)


class LiveWriter:
    """Stores one new exchange of ``user`` at a time, as a chat turn is stored (see the module's docstring)."""

    def __init__(self, sessions: sessionmaker[Session], embedder: Any, enriched: bool, user: str = USER,
                 merge: bool = True) -> None:
        from workers.digest import _store_statement  # the digest's own statement (imports the worker's modules)

        self.sessions, self.embedder, self.enriched, self.user = sessions, embedder, enriched, user
        self.merge = merge  # False: the lines' pending entries left to autovacuum, as the chunker did before rlive
        with sessions.begin() as session:
            session.execute(text("INSERT INTO threads (id, user_id) VALUES (:t, :u) ON CONFLICT DO NOTHING"),
                            {"t": LIVE_THREAD, "u": user})
            # Each run its own turns (a run repeating the last one's would bring no new word).
            seed = 11 + int(session.scalar(text("SELECT count(*) FROM exchanges WHERE thread_id = :t"),
                                           {"t": LIVE_THREAD}) or 0)
        self.gen, self.rng, self.topic = ChatGen(seed), random.Random(seed), "cooking"
        self._statement = _store_statement(tuple(self._exchange("", "")), tuple(self._decision("")))

    def _exchange(self, user_text: str, reply: str) -> dict[str, Any]:
        return {"request_id": uuid.uuid4().hex, "user_id": self.user, "thread_id": LIVE_THREAD, "source": "text",
                "user_text": user_text, "reply": reply, "mode": "chat", "topic": self.topic, "confidence": 0.8,
                "tool_trail": [], "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "timings": {},
                "fallback": False, "session_id": None, "embedding_model": vectors.DEFERRED}

    def _decision(self, request_id: str) -> dict[str, Any]:
        return {"request_id": request_id, "user_id": self.user, "thread_id": LIVE_THREAD, "mode": "chat",
                "confidence": 0.8, "scores": {}, "signals": {}, "margin": 0.1, "tiebreaker_used": False,
                "tiebreaker_result": None, "latency_ms": 1.0, "weights_version": None, "recalled": []}

    def store_one(self) -> dict[str, float]:
        """One chat turn stored and enriched as the workers would; the ms each step took."""
        if self.rng.random() < 0.15:
            self.topic = self.rng.choice(list(TOPICS))
        user_text, reply = self.gen.turn(self.topic, 1.6), self.gen.turn(self.topic, 2.0)
        exchange = self._exchange(user_text, reply)
        params = {**{f"x_{k}": v for k, v in exchange.items()},
                  **{f"d_{k}": v for k, v in self._decision(exchange["request_id"]).items()}}
        times, started = {}, time.perf_counter()
        with self.sessions.begin() as session:  # the digest's store (autocommit there: one statement)
            exchange_id = int(session.scalar(self._statement, params))
        times["store"], started = _ms(started), time.perf_counter()
        with self.sessions.begin() as session:  # the chunker job's first transaction
            vectors.fill_exchange(session, self.embedder, exchange_id)
        times["lines_vectors"], started = _ms(started), time.perf_counter()
        if self.merge:  # then, as the job does, the lines' index entries
            vectors.merge_pending_lines(self.sessions.kw["bind"])
            times["merge"], started = _ms(started), time.perf_counter()
        if self.enriched:  # the chunker's second transaction: its chunk and facts
            chunk = chunk_of(user_text, reply, self.rng, exchange_id % FACT_EVERY == 0)
            with self.sessions.begin() as session:
                store_chunk(session, self.embedder, SimpleNamespace(id=exchange_id, user_id=self.user,  # type: ignore[arg-type]
                                                                    session_id=None), chunk, model="bench")
            times["chunk"], started = _ms(started), time.perf_counter()
        times["words"] = float(vocabulary.fill_all(self.sessions, self.embedder))
        times["vocabulary"] = _ms(started)
        return times


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recall enrich", description=__doc__.splitlines()[0])
    parser.add_argument("--pgdata", required=True, help="a copy of a database the scale mode built (it is changed)")
    args = parser.parse_args(argv)
    pgdata = built_database(parser, args.pgdata)
    from services.embeddings import load_embedder

    with database(pgdata, migrate=False) as (engine, sessions):
        embedder, started = load_embedder("auto", cache_size=0), time.monotonic()
        chunks, facts = enrich_chunks(sessions, embedder)
        episodes = enrich_episodes(sessions, embedder)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE"))
        print(f"enriched {args.pgdata}: {chunks} chunks, {facts} facts (1 in {FACT_EVERY} exchanges), {episodes} "
              f"episodes in {time.monotonic() - started:.0f} s ({dt.datetime.now(dt.UTC):%H:%M} UTC)")

if __name__ == "__main__":
    main()
