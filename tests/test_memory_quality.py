"""Retrieval quality on a small conversation set (tests/data/memory_set.jsonl): facts stated in
one session, asked about in another, with paraphrase, names and dates.
Real MiniLM model (the default pair of graphs)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from services.db import make_sessionmaker
from services.memory.config import MemoryConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall
from services.memory.vectors import fill_all

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DATA = Path(__file__).parent / "data"
RECALL_AT_5_FLOOR = 0.85


@pytest.fixture(scope="module")
def minilm():
    from services.embeddings import load_embedder

    return load_embedder("auto")


def recall_at(sessions, embedder, user: str, k: int, config: MemoryConfig) -> tuple[float, list[str]]:
    questions = [json.loads(line) for line in (DATA / "memory_questions.jsonl").read_text().splitlines() if line]
    found, missed = 0, []
    with sessions() as session:
        for item in questions:
            now = dt.datetime.fromisoformat(item["now"].replace("Z", "+00:00"))
            hits = recall(session, embedder, user, item["question"], k=k, config=config, now=now, reinforce=False)
            if set(item["gold"]) & {e for hit in hits for e in hit.external_ids}:
                found += 1
            else:
                missed.append(item["question"])
    return found / len(questions), missed


def test_recall_at_5_on_the_memory_set(db_engine, minilm):
    lines, bad, _ = parse_lines((DATA / "memory_set.jsonl").read_text().splitlines())
    assert not bad
    sessions = make_sessionmaker(db_engine)
    store_records(sessions, minilm, "alice", pair_exchanges(lines))
    store_records(sessions, minilm, "bob", pair_exchanges(lines[:20]))  # another user's copy must not count
    fill_all(sessions, minilm)  # the vectors follow in the background: the backfill, run to completion
    score, missed = recall_at(sessions, minilm, "alice", 5, MemoryConfig())
    print(f"recall@5 = {score:.3f}; missed: {missed}")
    assert score >= RECALL_AT_5_FLOOR, missed
