"""Naive baselines of bench.locomo, computed on the same imported turns: BM25, vector, z-score fusion.

Each ranks single turns (the plain text of one line, no speaker, no neighbours) of the
question's conversation: BM25 with k1 1.2, b 0.75 over PostgreSQL's English lexemes; cosine of
MiniLM embeddings; and the sum of the two scores' z-scores over the conversation's turns.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from services.embeddings import Embedder

K1, B = 1.2, 0.75
DEPTH = 20


@dataclass
class Corpus:
    """One conversation's turns: ids, term frequencies, lengths, embeddings."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    tfs: list[dict[str, int]] = field(default_factory=list)
    vectors: np.ndarray | None = None

    def bm25(self, lexemes: list[str]) -> np.ndarray:
        lengths = np.array([sum(tf.values()) for tf in self.tfs], dtype=np.float64)
        avg = lengths.mean() if len(lengths) else 1.0
        scores = np.zeros(len(self.ids))
        n = len(self.ids)
        for lexeme in set(lexemes):
            tf = np.array([doc.get(lexeme, 0) for doc in self.tfs], dtype=np.float64)
            df = int((tf > 0).sum())
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            scores += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths / avg))
        return scores


def corpora(sessions: sessionmaker[Session], embedder: Embedder, users: list[str]) -> dict[str, Corpus]:
    """Every user's turns with their lexemes (the same analyser as recall) and embeddings."""
    found: dict[str, Corpus] = defaultdict(Corpus)
    with sessions() as session:
        rows = session.execute(text(
            "SELECT l.user_id, l.external_id, l.text, "
            "ARRAY(SELECT u.lexeme || ':' || coalesce(array_length(u.positions, 1), 1) "
            "      FROM unnest(to_tsvector('english', l.text)) u) AS tf "
            "FROM exchange_lines l WHERE l.user_id = ANY(:users) ORDER BY l.user_id, l.occurred_at, l.id"),
            {"users": users})
        for row in rows:
            corpus = found[row.user_id]
            corpus.ids.append(row.external_id)
            corpus.texts.append(row.text)
            corpus.tfs.append({item.rsplit(":", 1)[0]: int(item.rsplit(":", 1)[1]) for item in row.tf})
    for corpus in found.values():
        corpus.vectors = np.asarray(embedder.embed_many(corpus.texts), dtype=np.float32)
    return found


def query_lexemes(session: Session, question: str) -> list[str]:
    return list(session.scalars(text("SELECT unnest(tsvector_to_array(to_tsvector('english', :q)))"),
                                {"q": question}))


def _z(values: np.ndarray) -> np.ndarray:
    std = values.std()
    return (values - values.mean()) / std if std > 1e-12 else np.zeros_like(values)


def rankings(corpus: Corpus, lexemes: list[str], qvec: np.ndarray) -> dict[str, list[str]]:
    """The top turns of each baseline, best first."""
    bm25 = corpus.bm25(lexemes)
    cosine = corpus.vectors @ np.asarray(qvec, dtype=np.float32)
    fused = _z(bm25) + _z(cosine.astype(np.float64))
    top = {}
    for name, scores in (("plain BM25, single turns", bm25), ("plain vector, single turns", cosine),
                         ("z-score fusion of the two", fused)):
        order = np.argsort(-scores, kind="stable")[:DEPTH]
        top[name] = [corpus.ids[i] for i in order if name != "plain BM25, single turns" or bm25[i] > 0]
    return top
