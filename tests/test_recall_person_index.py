"""A large person's own indexes (services/memory/person_index.py): built once past the threshold and not below, read by
recall's vector and BM25 arms for that person only (also once psycopg has prepared the statement), harmless to build
twice, dropped when the person is forgotten; the backfill job builds them, the periodic service queues that job."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from rq import Queue
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import lineterms, person_index, search, turns
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.forget import forget_user
from services.memory.recall import recall
from services.memory.vectors import BACKFILL_JOB_IDS
from services.periodic import backfill
from services.periodic.backfill import IDLE
from services.queues import MEMORY_CHUNKER_QUEUE
from services.service_call import ServiceCall
from tests.memory_builders import people_with_vectors, unit_vector

pytestmark = pytest.mark.integration

# Each exchange is two turns: bob (300 exchanges, 600 turns) is past both; carol (150) is searched by HNSW but has too
# few vectors for her own; alice (40, 80 turns) is searched exactly.
CONFIG = RecallConfig(exact_lines=200, own_index_vectors=250)
SIZES = {"alice": 40, "bob": 300, "carol": 150}


@pytest.fixture
def people(db_engine: Engine):  # type: ignore[no-untyped-def]
    """The three people, committed (a concurrent index build waits for every open transaction that wrote)."""
    query = unit_vector(np.random.default_rng(7).standard_normal(384))
    with Session(db_engine) as session:
        stored = people_with_vectors(session, SIZES, query)
        for user in SIZES:  # a rare word in three turns of each, as the words a BM25 search goes by at scale (df_cap)
            session.execute(text("UPDATE exchange_lines SET text = text || ' zanzibar' WHERE id IN "
                                 "(SELECT id FROM exchange_lines WHERE user_id = :user ORDER BY id LIMIT 3)"),
                            {"user": user})
        session.commit()
        # The planner's statistics for these rows, as autovacuum would gather them; without this it plans from
        # whatever an earlier test's rows left in the shared test database (in CI: the user_id btree and a filter).
        session.execute(text("ANALYZE exchanges, exchange_lines"))
        session.commit()
    yield query, stored
    with db_engine.connect() as connection:  # the table is truncated after the test; the indexes would stay
        person_index.drop_orphans(connection.execution_options(isolation_level="AUTOCOMMIT"),
                                  replace(CONFIG, own_index_vectors=0))


_SCANS = text("SELECT pg_stat_get_xact_numscans(to_regclass(:n))")  # this transaction's scans of an index


def _settings(session: Session) -> None:
    """Recall's search settings, and the planner kept from sorting a few hundred rows, as it sorts them in a table
    this small (or scanning them all); in a table of a million it walks an index for a person of 80k
    (bench/tenants.py). Which index it then reads is the planner's own choice."""
    search.prepare_vector_search(session, CONFIG)
    session.execute(text("SET LOCAL enable_sort = off"))
    session.execute(text("SET LOCAL enable_seqscan = off"))


def _plan(session: Session, user: str, query: np.ndarray) -> str:
    _settings(session)
    sql = search.statement("EXPLAIN (ANALYZE, COSTS OFF) " + search.vector_sql("exchange", exact_lines=200), True)
    plan = "\n".join(session.scalars(sql, {"user": user, "qvec": query, "limit": 10}))
    session.rollback()
    return plan


def _ran(plan: str, index: str) -> bool:
    return any(index in line and "never executed" not in line for line in plan.splitlines())


def _arm(session: Session, user: str, query: np.ndarray) -> list[int]:
    _settings(session)
    found = list(session.scalars(search.statement(search.vector_sql("exchange", exact_lines=200), True),
                                 {"user": user, "qvec": query, "limit": 10}))
    session.rollback()
    return found


def _lexical(session: Session, user: str) -> tuple[str, list[int]]:
    """The BM25 arm's plan and lines for ``user``."""
    _settings(session)
    terms = lineterms.line_terms(session, user, "zanzibar", CONFIG)
    params: dict = {"user": user, "limit": 60}
    sql = turns.lexical_lines_sql(terms, CONFIG, params)
    plan = "\n".join(session.scalars(search.statement("EXPLAIN (ANALYZE, COSTS OFF) " + sql), params))
    found = turns.lexical_lines(session, user, terms, 60, CONFIG)
    session.rollback()
    return plan, found


def _oids(session: Session) -> dict[str, int]:
    return dict(session.execute(text("SELECT relname, oid::bigint FROM pg_class WHERE relname = ANY(:names)"),
                                {"names": list(person_index.held(session))}).tuples().all())


def test_the_index_is_built_once_past_the_threshold_and_not_below(db_engine, people):
    with Session(db_engine) as session:
        assert person_index.wanted(session, CONFIG) == [("bob", 300)]
        assert person_index.wanted(session, replace(CONFIG, own_index_vectors=0)) == []  # 0: none
    built = person_index.build_wanted(db_engine, CONFIG)
    names = sorted(person_index.index_name("bob", kind) for kind in person_index.KINDS)
    assert sorted((b.user_id, b.index, b.vectors) for b in built) == [("bob", name, 300) for name in names]
    with Session(db_engine) as session:
        first = _oids(session)
        assert sorted(first) == names and person_index.wanted(session, CONFIG) == []
        definitions = session.scalars(text("SELECT indexdef FROM pg_indexes WHERE indexname = ANY(:n) "
                                           "ORDER BY tablename"), {"n": names}).all()
        assert ["USING gin (search)" in definitions[0], "USING hnsw (embedding" in definitions[1]] == [True, True]
        assert all("WHERE ((user_id)::text = 'bob'::text)" in definition for definition in definitions), definitions
    assert person_index.build_wanted(db_engine, CONFIG) == []  # the job again: nothing to do, nothing rebuilt
    with Session(db_engine) as session:
        assert _oids(session) == first


def test_an_index_a_dead_build_left_invalid_is_built_again(db_engine, people):
    person_index.build_wanted(db_engine, CONFIG)
    vectors = person_index.index_name("bob")
    with Session(db_engine) as session:
        words = _oids(session)[person_index.index_name("bob", person_index.WORDS)]
        session.execute(text("UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass(:n)"),
                        {"n": vectors})
        session.commit()
        assert person_index.wanted(session, CONFIG) == [("bob", 300)]
    assert [(b.user_id, b.kind) for b in person_index.build_wanted(db_engine, CONFIG)] == [("bob", "vectors")]
    with Session(db_engine) as session:
        assert session.scalar(text("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:n)"),
                              {"n": vectors})
        assert _oids(session)[person_index.index_name("bob", person_index.WORDS)] == words  # the valid one kept
        assert person_index.wanted(session, CONFIG) == []


def test_recall_reads_the_persons_own_index_and_only_their_rows(db_engine, people):
    query, stored = people
    with Session(db_engine) as session:
        carol_before = _arm(session, "carol", query)
        assert _ran(_plan(session, "bob", query), "ix_exchanges_embedding")  # the shared index, until his is built
    person_index.build_wanted(db_engine, CONFIG)
    own = person_index.index_name("bob")
    with Session(db_engine) as session:
        bob_plan, carol_plan = _plan(session, "bob", query), _plan(session, "carol", query)
        assert _ran(bob_plan, own) and not _ran(bob_plan, "ix_exchanges_embedding"), bob_plan
        assert _ran(carol_plan, "ix_exchanges_embedding") and own not in carol_plan, carol_plan
        assert _arm(session, "carol", query) == carol_before  # another person's search is unchanged
        # The same statement on one connection eight times: psycopg prepares it from the fifth run on, and each run
        # is still planned for the bound person, so it reads his index every time.
        _settings(session)
        sql = search.statement(search.vector_sql("exchange", exact_lines=200), True)
        runs, scans = [], []
        for _ in range(8):
            before = session.scalar(_SCANS, {"n": own})
            runs.append(list(session.scalars(sql, {"user": "bob", "qvec": query, "limit": 10})))
            scans.append(session.scalar(_SCANS, {"n": own}) - before)
        plans = session.execute(text("SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                                     "WHERE statement LIKE '%ORDER BY t.embedding <=>%'")).all()
        session.rollback()
    assert all(scans) and plans and all(generic == 0 and custom >= 1 for generic, custom in plans), (scans, plans)
    exact = sorted(stored["bob"], key=lambda i: -float(stored["bob"][i] @ query))[:10]
    assert all(found == runs[0] for found in runs) and set(runs[0]) <= set(stored["bob"])
    with Session(db_engine) as session:  # his BM25 matches come from his own full-text index, hers never do
        for user in ("bob", "carol"):
            plan, found = _lexical(session, user)
            words = person_index.index_name("bob", person_index.WORDS)
            assert _ran(plan, words) == (user == "bob") and (words in plan) == (user == "bob"), plan
            owners = session.scalars(text("SELECT DISTINCT user_id FROM exchange_lines WHERE id = ANY(:ids)"),
                                     {"ids": found}).all()
            assert owners == [user] and len(found) == 3, plan
    assert len(set(runs[0]) & set(exact)) >= 9  # an HNSW search of his 300 rows finds his true nearest
    with Session(db_engine) as session:
        for user in SIZES:
            hits = recall(session, None, user, "coffee piano garden", k=10, query_embedding=query,
                          config=replace(MemoryConfig(), recall=CONFIG), reinforce=False)
            ids = {i for hit in hits for i in hit.exchange_ids} | {line["exchange_id"] for hit in hits
                                                                  for line in hit.lines}
            assert hits and ids <= set(stored[user]), user


def test_forgetting_the_person_drops_their_index_and_the_job_drops_one_left_behind(db_engine, people):
    query, _ = people
    person_index.build_wanted(db_engine, CONFIG)
    report = forget_user(make_sessionmaker(db_engine), None, "bob")
    assert report.indexes_dropped and report.to_dict()["own_indexes_dropped"]
    with Session(db_engine) as session:
        assert person_index.held(session) == {}
        assert _arm(session, "carol", query)  # the others' recall goes on
        # A person deleted without forget (a forget that died after its commit): the job drops their index.
        session.execute(text("UPDATE exchange_line_counts SET lines = 1000 WHERE user_id = 'carol'"))
        session.commit()
    built = person_index.build_wanted(db_engine, replace(CONFIG, own_index_vectors=100))
    assert [(b.user_id, b.kind) for b in built] == [("carol", "vectors"), ("carol", "words")]
    with Session(db_engine) as session:
        session.execute(text("DELETE FROM users WHERE id = 'carol'"))
        session.commit()
    assert person_index.build_wanted(db_engine, CONFIG) == []
    with Session(db_engine) as session:
        assert person_index.held(session) == {}


def test_the_backfill_job_builds_it_and_the_periodic_service_queues_the_job(worker_context, real_redis, run_jobs,
                                                                             people):
    def fire() -> object:
        return backfill.run(ServiceCall("vector_backfill", f"fire-{time.monotonic()}", worker_context))

    worker_context.extras["memory_config"] = replace(MemoryConfig(), recall=replace(CONFIG, expansion_words=0))
    result = fire()
    assert result.outcome == "ran" and Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).job_ids
    run_jobs((MEMORY_CHUNKER_QUEUE,))
    job = Queue(MEMORY_CHUNKER_QUEUE, connection=real_redis).fetch_job(BACKFILL_JOB_IDS[0])
    assert job.return_value() == "embedded 0, 0 waiting; 0 words added; 2 own indexes built"
    with worker_context.sessions() as session:
        assert sorted(person_index.held(session)) == sorted(person_index.index_name("bob", kind)
                                                            for kind in person_index.KINDS)
    assert fire().reason == IDLE
