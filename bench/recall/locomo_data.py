"""LoCoMo's conversations for ``bench.recall locomo``: found, read as the JSON lines ``engram import`` takes, imported;
and the naive baselines ranked on the same imported turns.

The data (snap-research/locomo, CC BY-NC 4.0) is read from ``../shared/data/locomo-dev/`` beside the
repository, never copied into it. Each conversation becomes its own user; its questions with evidence
keep the evidence ids that name a stored turn.

The baselines rank single turns (the plain text of one line, no speaker, no neighbours) of the question's
conversation: BM25 with k1 1.2, b 0.75 over PostgreSQL's English lexemes; cosine of MiniLM embeddings; and the
sum of the two scores' z-scores over the conversation's turns.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from bench.recall import import_history
from services.embeddings import Embedder
from services.memory.importer import pair_exchanges, parse_lines

ROOT = Path(__file__).resolve().parents[2]
K1, B = 1.2, 0.75  # the baselines' BM25
DEPTH = 20  # turns each baseline ranks
DATA_CANDIDATES = [ROOT.parent / "shared" / "data" / "locomo-dev", ROOT.parents[1] / "shared" / "data" / "locomo-dev"]
EVIDENCE_ID = re.compile(r"D\d+:\d+")
TURN_GAP = dt.timedelta(seconds=20)  # turns of a session are minutes apart; only their order matters here


@dataclass
class Question:
    user: str
    text: str
    category: int
    evidence: set[str]
    now: dt.datetime
    answer: str = ""  # the dataset's answer ("" for adversarial questions, which have none)


def find_data(given: str | None) -> Path | None:
    candidates = [Path(given)] if given else DATA_CANDIDATES
    return next((path for path in candidates if path.is_dir() and any(path.glob("*.json"))), None)


def session_time(value: str) -> dt.datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" as UTC."""
    return dt.datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=dt.UTC)


def conversation_lines(data: dict[str, Any]) -> list[str]:
    """The conversation as the JSON lines ``engram import`` reads (a shared image is told by its caption)."""
    lines = []
    number = 1
    while f"session_{number}" in data:
        start = session_time(data[f"session_{number}_date_time"])
        for index, turn in enumerate(data[f"session_{number}"]):
            body = turn["text"].strip()
            if turn.get("blip_caption"):
                body = f"{body} [shared an image: {turn['blip_caption']}]".strip()
            if not body:
                continue
            lines.append(json.dumps({"session": f"session_{number}", "speaker": turn["speaker"], "text": body,
                                     "timestamp": (start + index * TURN_GAP).isoformat(),
                                     "external_id": turn["dia_id"]}))
        number += 1
    return lines


def questions_of(user: str, data: dict[str, Any], known: set[str], end: dt.datetime) -> list[Question]:
    """Questions with evidence; evidence ids are cleaned ("D8:6; D9:17") and kept when the turn exists."""
    found = []
    for item in data.get("qa", []):
        evidence = {match for raw in item.get("evidence") or [] for match in EVIDENCE_ID.findall(str(raw))} & known
        if evidence:
            found.append(Question(user, item["question"], int(item["category"]), evidence, end,
                                  str(item.get("answer", ""))))
    return found


def load(sessions: sessionmaker[Session], embedder: Embedder, folder: Path) -> tuple[list[Question], float, float]:
    """Import every conversation as its own user, then backfill its vectors (the job's function, to completion);
    returns the questions, the store rate (exchanges/s) and the backfill's rate (exchanges embedded/s)."""
    questions, stored, seconds, embedded, embed_seconds = [], 0, 0.0, 0, 0.0
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        conversation = data.get("conversation", data)
        user = f"locomo-{path.stem}"
        lines, bad, _ = parse_lines(conversation_lines(conversation))
        if bad:
            raise SystemExit(f"{path}: {len(bad)} lines the importer refused, first: {bad[0]}")
        done = import_history(sessions, embedder, user, pair_exchanges(lines))
        stored, seconds = stored + done["stored"], seconds + done["seconds"]
        embedded, embed_seconds = embedded + done["vectors"], embed_seconds + done["vectors_s"] + done["words_s"]
        end = max(line.at for line in lines) + dt.timedelta(days=1)
        questions += questions_of(user, data, {line.external_id for line in lines if line.external_id}, end)
    return (questions, stored / seconds if seconds and stored else 0.0,
            embedded / embed_seconds if embed_seconds and embedded else 0.0)


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
