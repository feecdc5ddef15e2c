"""Hybrid recall: lexical + vector, provenance, recency from elapsed time, reinforcement,
neighbouring turns, time windows, context assembly, per-user isolation, and index use."""

from __future__ import annotations

import datetime as dt
import math
import random

import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import Exchange, insert
from services.memory import lineterms, search, turns
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.context import assemble
from services.memory.facts import remember_fact
from services.memory.models import Episode, ExchangeAccess, Fact
from services.memory.recall import recall
from tests.memory_builders import create_exchange, create_thread

pytestmark = pytest.mark.integration

NOW = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)
FILLER = ["We talked about the weather today.", "Can you recommend a good book?", "I had pasta for dinner.",
          "The traffic was terrible this morning.", "Let's plan the weekend.", "My phone battery died again."]


@pytest.fixture
def session(db_engine):
    with Session(db_engine) as session:
        yield session
        session.rollback()


def _add(session, embedder, user_text, *, user="alice", reply="", days_ago=10.0, thread_id=None, external_id=None):
    return create_exchange(session, user_id=user, user_text=user_text, reply=reply, embedder=embedder,
                           thread_id=thread_id, occurred_at=NOW - dt.timedelta(days=days_ago),
                           external_id=external_id)


def _filler(session, embedder, user="alice", thread_id=None):
    for n, line in enumerate(FILLER):
        _add(session, embedder, line, user=user, days_ago=30 + n, thread_id=thread_id)


def test_a_rare_name_is_found_with_its_provenance(session, hash_embedder):
    _filler(session, hash_embedder)
    target = _add(session, hash_embedder, "My piano teacher Ingrid moved to Bergen.", external_id="conv1:17")
    hits = recall(session, hash_embedder, "alice", "Where did Ingrid move?", k=3, now=NOW)
    assert hits[0].kind == "exchange" and hits[0].id == target.id
    assert hits[0].external_ids[0] == "conv1:17" and hits[0].exchange_ids[0] == target.id
    assert {"vector", "lexical", "relevance", "recency", "salience", "access", "time_match"} <= set(hits[0].signals)
    assert hits[0].signals["lexical"] > 0


def test_facts_and_episodes_carry_the_source_exchanges(session, hash_embedder):
    source = _add(session, hash_embedder, "I'm allergic to peanuts", external_id="imp:9")
    remember_fact(session, hash_embedder, "alice", "The user is allergic to peanuts", source_exchange_id=source.id)
    session.add(Episode(user_id="alice", session_id="s1", title="Dinner planning", gist="Planned a peanut-free dinner",
                        summary="Discussed recipes without peanuts.", salience=0.6, exchange_ids=[source.id],
                        embedding=hash_embedder.embed("Dinner planning peanut-free dinner"), ended_at=NOW))
    session.flush()
    hits = recall(session, hash_embedder, "alice", "peanuts allergy", k=5, now=NOW)
    kinds = {hit.kind: hit for hit in hits}
    assert {"fact", "episode", "exchange"} <= set(kinds)
    assert kinds["fact"].exchange_ids == [source.id] and kinds["fact"].external_ids == ["imp:9"]
    assert kinds["episode"].external_ids == ["imp:9"]


def test_recency_is_computed_from_elapsed_time_at_query_time(session, hash_embedder):
    old = _add(session, hash_embedder, "I started learning the cello", days_ago=200)
    new = _add(session, hash_embedder, "I started learning the cello", days_ago=1)
    hits = recall(session, hash_embedder, "alice", "learning the cello", k=2, now=NOW, reinforce=False)
    assert [hit.id for hit in hits] == [new.id, old.id]
    decay = RecallConfig().decay_per_day
    assert hits[0].signals["recency"] == pytest.approx(math.exp(-decay * 1), abs=1e-3)
    later = recall(session, hash_embedder, "alice", "learning the cello", k=2, now=NOW + dt.timedelta(days=60),
                   reinforce=False)
    # Nothing is stored-and-decayed: the same row simply looks older from a later clock.
    assert later[0].signals["recency"] == pytest.approx(math.exp(-decay * 61), abs=1e-3)


def test_returned_items_are_reinforced(session, hash_embedder):
    target = _add(session, hash_embedder, "The wifi password is sunflower42")
    fact = remember_fact(session, hash_embedder, "alice", "The wifi password is sunflower42")
    for _ in range(2):
        recall(session, hash_embedder, "alice", "sunflower42 wifi", k=2, now=NOW)
    assert session.get(ExchangeAccess, target.id).access_count == 2
    assert session.get(Fact, fact.fact_id).access_count == 2
    hits = recall(session, hash_embedder, "alice", "sunflower42 wifi", k=2, now=NOW, reinforce=False)
    assert all(hit.signals["access"] > 0 for hit in hits)


def test_a_hit_is_the_answering_turn_with_the_turn_it_replies_to(session, hash_embedder):
    thread = create_thread(session, user_id="alice")
    _add(session, hash_embedder, "Morning!", reply="Good morning, how did it go?", days_ago=3, thread_id=thread)
    hit = _add(session, hash_embedder, "I got promoted to team lead", reply="Congratulations!", days_ago=2.9,
               thread_id=thread)
    _add(session, hash_embedder, "We celebrated with sushi", days_ago=2.8, thread_id=thread)
    # The span's shape, not how the news ranks against the reply congratulating it: the two tie on words
    # (the reply gets its replied-to turn's BM25) and the conversation-context similarity may favour either.
    spans = MemoryConfig(recall=RecallConfig(span_replied_to="always", context_sim_weight=0.0))
    hits = recall(session, hash_embedder, "alice", "promoted team lead", k=3, now=NOW, config=spans)
    assert hits[0].id == hit.id
    assert [line["text"] for line in hits[0].lines] == ["Good morning, how did it go?", "I got promoted to team lead"]
    shown = [line["line_id"] for h in hits for line in h.lines]
    assert len(shown) == len(set(shown))  # no turn is shown twice


def test_a_named_month_finds_what_happened_then(session, hash_embedder):
    _filler(session, hash_embedder)
    may = _add(session, hash_embedder, "Hiked the Dolomites with Sam", days_ago=(NOW - dt.datetime(2026, 5, 14,
                                                                                                  tzinfo=dt.UTC)).days)
    hits = recall(session, hash_embedder, "alice", "What did I do last May?", k=3, now=NOW)
    assert hits[0].id == may.id and hits[0].signals["time_match"] == 1.0


def test_context_assembly_is_honest_and_budgeted(session, hash_embedder):
    _add(session, hash_embedder, "My daughter Mia starts school in September")
    remember_fact(session, hash_embedder, "alice", "The user's daughter is called Mia", salience=0.9)
    text_block = assemble(session, hash_embedder, "alice", "When does Mia start school?", now=NOW).text
    assert "Mia" in text_block and "Facts the person told you:" in text_block
    assert len(assemble(session, hash_embedder, "alice", "When does Mia start school?", budget_tokens=50,
                        now=NOW).text) <= 50 * 4
    assert assemble(session, hash_embedder, "bob", "When does Mia start school?", now=NOW).text == ""


def test_no_query_of_one_user_returns_anything_of_another(session, hash_embedder, db_engine):
    for user in ("alice", "bob"):
        thread = create_thread(session, user_id=user)
        _filler(session, hash_embedder, user=user, thread_id=thread)
        _add(session, hash_embedder, "My dog Biscuit loves the beach", user=user, thread_id=thread)
        remember_fact(session, hash_embedder, user, "The user has a dog named Biscuit")
        session.add(Episode(user_id=user, session_id=f"s-{user}", title="Dog at the beach", gist="Biscuit",
                            summary="Biscuit at the beach", salience=0.5, exchange_ids=[],
                            embedding=hash_embedder.embed("Dog at the beach Biscuit")))
    session.flush()
    bob_ids = {(kind, i) for kind, table in (("exchange", "exchanges"), ("fact", "facts"), ("episode", "episodes"))
               for i in session.scalars(text(f"SELECT id FROM {table} WHERE user_id = 'bob'"))}
    statements: list[str] = []

    def capture(conn, cursor, statement, parameters, context, executemany):  # noqa: ARG001
        statements.append(statement)

    event.listen(db_engine, "before_cursor_execute", capture)
    try:
        hits = recall(session, hash_embedder, "alice", "Biscuit the dog at the beach", k=20, now=NOW,
                      query_embedding=None)
    finally:
        event.remove(db_engine, "before_cursor_execute", capture)
    assert hits and not ({(hit.kind, hit.id) for hit in hits} & bob_ids)
    assert not any(i in {i for kind, i in bob_ids if kind == "exchange"} for hit in hits for i in hit.exchange_ids)
    touching = [s for s in statements if any(t in s for t in ("exchanges", "facts", "episodes"))]
    assert touching and all("user_id" in s for s in touching)


@pytest.mark.slow
def test_the_queries_use_the_hnsw_and_gin_indexes(session, hash_embedder):
    """Enough rows that the planner prefers the indexes on its own (no enable_seqscan tricks)."""
    words = "apple river mountain coffee piano garden python rocket violin castle forest ocean lemon".split()
    rng = random.Random(7)
    thread = create_thread(session, user_id="alice")
    texts = [" ".join(rng.choice(words) for _ in range(6)) + f" item{i}" + (" zanzibar" if i % 500 == 1 else "")
             for i in range(4000)]
    vectors = hash_embedder.embed_many(texts)
    rows = [{"request_id": f"r{i}", "user_id": "alice", "thread_id": thread, "user_text": t, "reply": "",
             "mode": "RESPOND", "embedding": v, "tool_trail": [], "timings": {}}
            for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
    for start in range(0, len(rows), 500):
        session.execute(insert(Exchange).values(rows[start : start + 500]))
    session.execute(text("ANALYZE exchanges"))
    config = RecallConfig()
    search.prepare_vector_search(session, config)
    vector_sql = ("EXPLAIN SELECT t.id FROM exchanges t WHERE t.user_id = :user AND TRUE "
                  "ORDER BY t.embedding <=> :qvec LIMIT :limit")
    plan = "\n".join(session.scalars(text(vector_sql).bindparams(search.vector_param()),
                                     {"user": "alice", "qvec": hash_embedder.embed("coffee piano"), "limit": 40}))
    assert "ix_exchanges_embedding" in plan
    # As autovacuum would have: the fresh rows wait in the GIN's pending list, which the planner avoids.
    session.execute(text("SELECT gin_clean_pending_list('ix_exchange_lines_search')"))
    session.execute(text("ANALYZE exchange_lines"))
    terms = lineterms.line_terms(session, "alice", "Which zanzibar had coffee?", config)
    statements = []
    event.listen(session.get_bind(), "before_cursor_execute", lambda *args: statements.append(args[2:4]))
    turns.lexical_lines(session, "alice", terms, 40, config)
    sql, parameters = statements[-1]
    cursor = session.connection().connection.driver_connection.cursor()
    plan = "\n".join(row[0] for row in cursor.execute("EXPLAIN " + sql, parameters).fetchall())
    assert "ix_exchange_lines_search" in plan
    nearest = session.scalars(search.statement(search.vector_sql("exchange"), qvec=True),
                              {"user": "alice", "qvec": hash_embedder.embed(texts[5]), "limit": 5})
    assert list(nearest)[0] == 6  # ids start at 1


def test_a_long_message_is_searched_by_a_bounded_number_of_its_longest_words(session, hash_embedder):
    _filler(session, hash_embedder)
    words = [f"zq{n:03d}" + "k" * (n % 7) for n in range(300)]  # 300 distinct lexemes, 43 of the longest length
    config = RecallConfig(max_query_terms=32, rewrite_query=False)  # the words as they are
    terms = lineterms.line_terms(session, "alice", " ".join(words), config).terms
    assert len(terms.lexemes) == 32
    assert {len(lexeme) for lexeme in terms.lexemes} == {len(max(words, key=len))}
    assert lineterms.line_terms(session, "alice", "weather", config).terms.lexemes == ["weather"]
