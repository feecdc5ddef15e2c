"""Many people in one table: the vector arm searches a small person exactly, a large one by the HNSW index; the BM25
arm matches a small person's own rows, a large one's through the full-text index; and no recall ever returns another
person's rows (services/memory/search.py ``vector_sql``, turns.py ``lexical_lines``; bench/tenants.py)."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.memory import lineterms, search, turns
from services.memory.config import RecallConfig
from services.memory.recall import recall
from tests.memory_builders import WORDS, people_with_vectors, unit_vector

pytestmark = pytest.mark.integration


@pytest.fixture
def session(db_engine):
    with Session(db_engine) as session:
        yield session
        session.rollback()


def _exact(vectors: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:
    ids = list(vectors)
    distances = 1 - np.stack([vectors[i] for i in ids]) @ query
    return [ids[i] for i in np.argsort(distances, kind="stable")[:k]]


def _tight_index_search(session: Session) -> None:
    """The HNSW index forced and its iterative scan cut short, as a table of a million rows cuts it for a person
    holding a few hundred of them: the scan meets the crowd's rows first."""
    session.execute(text("SET LOCAL enable_seqscan = off"))
    session.execute(text("SET LOCAL enable_sort = off"))


def _arm(session: Session, user: str, query: np.ndarray, k: int, config: RecallConfig) -> list[int]:
    search.prepare_vector_search(session, config)
    session.execute(text("SELECT set_config('hnsw.max_scan_tuples', '50', true)"))
    arm = search.statement(search.vector_sql("exchange", exact_lines=config.exact_lines), True)
    return list(session.scalars(arm, {"user": user, "qvec": query, "limit": k}))


def test_a_small_person_gets_their_exact_nearest_rows_whatever_crowds_the_index(session):
    query = unit_vector(np.random.default_rng(1).standard_normal(384))
    people = people_with_vectors(session, {"alice": 40, "bob": 300}, query, crowd="bob")
    _tight_index_search(session)
    by_index = _arm(session, "alice", query, 10, RecallConfig(exact_lines=0, ef_search=10))
    assert len(by_index) < 10  # the failure the exact path exists for: bob's rows exhaust the scan
    found = _arm(session, "alice", query, 10, RecallConfig(exact_lines=200, ef_search=10))
    assert found == _exact(people["alice"], query, 10)


def test_a_large_person_is_searched_by_the_index_and_a_small_one_never_is(session):
    query = unit_vector(np.random.default_rng(2).standard_normal(384))
    people_with_vectors(session, {"alice": 40, "bob": 300}, query, crowd="bob")
    _tight_index_search(session)
    config = RecallConfig(exact_lines=200)
    search.prepare_vector_search(session, config)
    sql = search.statement("EXPLAIN (ANALYZE, COSTS OFF) " + search.vector_sql("exchange", exact_lines=200), True)
    plans = {user: "\n".join(session.scalars(sql, {"user": user, "qvec": query, "limit": 10}))
             for user in ("alice", "bob")}
    for user, plan in plans.items():
        by_index = next(line for line in plan.splitlines() if "ix_exchanges_embedding" in line)
        own_rows = next(line for line in plan.splitlines() if "ix_exchanges_user_id" in line)
        assert ("never executed" in by_index) == (user == "alice"), plan
        assert ("never executed" in own_rows) == (user == "bob"), plan


def test_a_small_persons_bm25_matches_come_from_their_own_rows_the_same_as_by_the_index(session):
    query = unit_vector(np.random.default_rng(5).standard_normal(384))
    people = people_with_vectors(session, {"alice": 60, "bob": 400}, query, crowd="bob")
    config, by_index = RecallConfig(exact_lines=200), RecallConfig(exact_lines=0)
    session.execute(text("ANALYZE exchange_lines"))
    asked = "coffee piano garden kayak"
    for user in ("alice", "bob"):
        search.prepare_vector_search(session, config)
        terms = lineterms.line_terms(session, user, asked, config)
        params: dict = {"user": user, "limit": 60}
        sql = turns.lexical_lines_sql(terms, config, params)
        plan = "\n".join(session.scalars(search.statement("EXPLAIN (ANALYZE, COSTS OFF) " + sql), params))
        lines = plan.splitlines()
        branch = next(i for i, line in enumerate(lines) if "Subquery Scan on o" in line)
        # The own-rows branch's row source runs for her only; his turns come by the other branch.
        source = next(line for line in lines[branch:] if "Scan" in line and " on exchange_lines" in line)
        assert ("never executed" in source) == (user == "bob"), plan
        if user == "alice":
            assert all("never executed" in line for line in plan.splitlines() if "ix_exchange_lines_search" in line)
        found = turns.lexical_lines(session, user, terms, 60, config)
        assert found and found == turns.lexical_lines(session, user, terms, 60, by_index)
        owners = session.scalars(text("SELECT DISTINCT l.user_id FROM exchange_lines l WHERE l.id = ANY(:ids)"),
                                 {"ids": found}).all()
        assert owners == [user] and len(people[user]) > 0


def test_no_recall_returns_another_persons_rows(session, hash_embedder):
    """Three people sharing words and nearby vectors; every hit (its exchanges and turns) is the asker's,
    by the exact path and by the index."""
    query = unit_vector(hash_embedder.embed("coffee piano garden"))
    people = people_with_vectors(session, {"alice": 30, "bob": 300, "carol": 5}, query, crowd="bob")
    rng = random.Random(4)
    returned = 0
    for exact_lines in (0, 200):
        config = replace(RecallConfig(), exact_lines=exact_lines)
        for _ in range(20):
            user = rng.choice(list(people))
            asked = " ".join(rng.choice(WORDS) for _ in range(3))
            hits = recall(session, hash_embedder, user, asked, k=10, config=config, reinforce=False)
            ids = {i for hit in hits for i in hit.exchange_ids}
            ids |= {line["exchange_id"] for hit in hits for line in hit.lines}
            assert ids <= set(people[user]), (user, asked)
            returned += len(ids)
    assert returned  # the recalls found something to check


def test_the_vocabulary_keeps_no_vector_index_that_nothing_reads(session):
    """Migration 0018: the expansion's kNN is exact (vocabulary.nearest_sql, vocabmatrix); an HNSW index of every
    person's words only cost its inserts and its pages (397 MiB beside a 324 MiB table at 150k exchanges)."""
    indexes = session.scalars(text("SELECT indexdef FROM pg_indexes WHERE tablename = 'vocabulary'")).all()
    assert indexes and not any("hnsw" in definition for definition in indexes)
