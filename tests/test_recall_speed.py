"""Recall mechanics at scale: the per-user line count BM25's IDF needs is exact after every kind
of write (import COPY, a live turn's derived lines, deletes and cascades), and recall uses it."""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import lineterms, turns
from services.memory.config import RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration


def _counts(session: Session) -> tuple[dict[str, int], dict[str, int]]:
    kept = dict(session.execute(text("SELECT user_id, lines FROM exchange_line_counts")).tuples().all())
    real = dict(session.execute(text("SELECT user_id, count(*) FROM exchange_lines GROUP BY user_id")).tuples().all())
    return {user: n for user, n in kept.items() if n}, real


def _import(db_engine, user: str, n: int) -> None:
    lines, _, _ = parse_lines(json.dumps({"session": f"s{i % 3}", "role": "user" if i % 2 == 0 else "assistant",
                                          "text": f"line {i} about gardens and boats",
                                          "timestamp": f"2026-02-01T{i // 60:02d}:{i % 60:02d}:00Z"})
                              for i in range(n))
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(lines), batch_size=16)


def test_the_line_count_stays_exact_through_imports_live_turns_and_deletes(db_engine):
    _import(db_engine, "alice", 60)
    _import(db_engine, "bob", 9)
    with Session(db_engine) as session:
        kept, real = _counts(session)
        assert kept == real and real["alice"] == 60 and real["bob"] == 9
        live = create_exchange(session, user_id="alice", user_text="a live message", reply="a live reply",
                               embedder=HashEmbedder(), occurred_at=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
        session.commit()
        kept, real = _counts(session)
        assert kept == real and real["alice"] == 62  # the trigger's two derived lines are counted
        session.execute(text("DELETE FROM exchanges WHERE id = :id"), {"id": live.id})  # lines go by cascade
        session.execute(text("DELETE FROM exchange_lines WHERE user_id = 'alice' AND position = 1"))
        session.commit()
        kept, real = _counts(session)
        assert kept == real and real["alice"] < 60
        session.execute(text("DELETE FROM users WHERE id = 'bob'"))
        session.commit()
        kept, real = _counts(session)
        assert kept == real and "bob" not in kept


def test_bm25_idf_counts_every_line_of_a_user_with_more_lines_than_the_sample(db_engine):
    _import(db_engine, "alice", 80)
    with Session(db_engine) as session:
        terms = lineterms.line_terms(session, "alice", "boats", RecallConfig(length_sample=10))
    assert terms.total == 80


FACTS = ["The user is allergic to peanuts", "The user's sister Mara lives in Lisbon", "The user runs on Tuesdays",
         "The user's dog is a beagle called Biscuit", "The user works as a nurse", "The user plays the cello"]


@pytest.mark.parametrize("query, window", [
    ("peanuts and Lisbon", None),
    ("what about the beagle", (dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 2, 1, tzinfo=dt.UTC))),
    ("zzz unknown words", None),
])
@pytest.mark.parametrize("with_vector", [True, False])
def test_facts_and_episodes_come_from_one_statement_each_with_the_same_candidates_as_the_arms(
        db_engine, query, window, with_vector):
    from sqlalchemy import event

    from services.memory import search
    from services.memory.facts import remember_fact
    from services.memory.models import Episode

    embedder = HashEmbedder()
    with Session(db_engine) as session:
        create_exchange(session, user_id="alice", user_text="hello", embedder=embedder)
        for fact in FACTS:
            remember_fact(session, embedder, "alice", fact)
        for day, fact in enumerate(FACTS):
            ended = dt.datetime(2026, 1, 5, tzinfo=dt.UTC) + dt.timedelta(days=9 * day)
            session.add(Episode(user_id="alice", session_id=f"s{day}", title=f"Talk {day}", gist=fact, summary=fact,
                                embedding=embedder.embed(fact), ended_at=ended))
        session.flush()
        config = RecallConfig(candidates=3)
        search.prepare_vector_search(session, config)
        qvec = embedder.embed(query) if with_vector else None
        terms = lineterms.line_terms(session, "alice", query, config).terms
        statements = []
        event.listen(session.get_bind(), "before_cursor_execute", lambda *args: statements.append(args[2]))
        for kind in ("fact", "episode"):
            combined = search.kind_candidates(session, kind, "alice", qvec, terms, window, 3, config)
            ids: dict[int, None] = {}  # the oracle: each arm's statement alone, then the signals of their ids
            arms = [search.vector_sql(kind)] if qvec is not None else []
            params = {"user": "alice", "limit": 3, "qvec": qvec}
            arms += [search._lexical_sql(kind, terms, params, config)] if terms else []
            arms += [search.window_sql(kind, window, qvec, terms, params)] if window and kind != "fact" else []
            for arm in arms:
                ids.update(dict.fromkeys(session.scalars(search.statement(arm, ":qvec" in arm), params)))
            separate = search._candidates(session, kind, "t.id = ANY(:ids)", {"user": "alice", "ids": list(ids)},
                                          qvec, terms) if ids else []
            assert sorted((c.id, c.sim, c.lex) for c in combined) == sorted((c.id, c.sim, c.lex) for c in separate)
            assert combined or not with_vector  # the vector arm always finds something
        arms = [s for s in statements if "ORDER BY" in s and "t.id IN (" in s]
        assert len(arms) == 2  # one statement per kind


def _import_texts(db_engine, user: str, texts: list[str]) -> None:
    lines, _, _ = parse_lines(json.dumps({"session": "s1", "role": "user" if i % 2 == 0 else "assistant", "text": body,
                                          "timestamp": f"2026-02-01T{i // 60:02d}:{i % 60:02d}:00Z"})
                              for i, body in enumerate(texts))
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(lines), batch_size=16)


def test_a_turn_with_the_rarest_query_word_is_found_when_the_other_words_match_more_turns_than_are_scored(db_engine):
    from services.memory.config import MemoryConfig
    from services.memory.recall import recall

    # The newest turn holds the rare word; the common one fills more turns than BM25 may score (match_cap).
    texts = [f"we talked about boats again, day {i}" for i in range(60)] + ["the zanzibar trip with boats"]
    _import_texts(db_engine, "alice", texts)
    config = RecallConfig(match_cap=20, line_candidates=5)
    with Session(db_engine) as session:
        terms = lineterms.line_terms(session, "alice", "zanzibar boats", config)
        hits = recall(session, None, "alice", "zanzibar boats", k=3, config=MemoryConfig(recall=config),
                      reinforce=False)
    assert terms.terms.filter_lexemes == ["zanzibar"]  # the rarest word searches alone; "boat" still scores
    assert hits and "zanzibar" in hits[0].text


def test_every_rare_word_searches_when_the_user_has_no_more_turns_than_are_scored(db_engine):
    _import_texts(db_engine, "alice", [f"we talked about boats again, day {i}" for i in range(30)]
                  + ["the zanzibar trip with boats"])
    with Session(db_engine) as session:
        terms = lineterms.line_terms(session, "alice", "zanzibar boats", RecallConfig(match_cap=40))
    assert sorted(terms.terms.filter_lexemes) == ["boat", "zanzibar"]


def test_a_query_of_common_words_only_scores_at_most_common_match_cap_turns(db_engine):
    _import_texts(db_engine, "alice", [f"we talked about boats again, day {i}" for i in range(60)]
                  + ["the zanzibar trip with boats"])
    config = RecallConfig(df_cap=20, common_match_cap=10)
    with Session(db_engine) as session:
        common = lineterms.line_terms(session, "alice", "boats", config)
        rare = lineterms.line_terms(session, "alice", "zanzibar boats", config)
        scored = {name: turns.lexical_lines(session, "alice", terms, 50, config)
                  for name, terms in (("common", common), ("rare", rare))}
        every = turns.lexical_lines(session, "alice", common, 50, RecallConfig(df_cap=20))
    assert common.common and len(scored["common"]) == 10 and len(every) == 50  # 61 turns hold "boat"
    assert not rare.common and len(scored["rare"]) == 1  # the rare word searches, under match_cap


def test_a_query_of_common_words_scores_the_turns_holding_both_of_its_rarest_words_first(db_engine):
    # Both words fill more turns than are scored; the turns holding both come last in storage order, where a
    # plain cut (the first matches stored) never reaches them.
    texts = ([f"we talked about boats again, day {i}" for i in range(40)]
             + [f"the harbour was calm, day {i}" for i in range(40)]
             + [f"boats in the harbour at dawn, morning {i}" for i in range(3)])
    _import_texts(db_engine, "alice", texts)
    config = RecallConfig(df_cap=20, common_match_cap=10)
    with Session(db_engine) as session:
        terms = lineterms.line_terms(session, "alice", "boats harbour", config)
        scored = turns.lexical_lines(session, "alice", terms, 3, config)
        lines = dict(session.execute(text("SELECT id, text FROM exchange_lines WHERE id = ANY(:ids)"),
                                     {"ids": scored}).all())
    assert terms.common and terms.pair is not None and sorted(terms.pair) == ["boat", "harbour"]
    assert len(scored) == 3 and all("boats in the harbour" in line for line in lines.values())


@pytest.mark.parametrize("picked", [(4, 5), (4, 6), (4, 8), (0, 11), (5, 6, 7)])
def test_window_rows_brings_reach_lines_either_side_of_every_seed_also_when_seeds_are_close(db_engine, picked):
    # One thread of 12 lines; the lines before a seed that follows another seed closely are found through it.
    _import_texts(db_engine, "alice", [f"line number {i} of the thread" for i in range(12)])
    with Session(db_engine) as session:
        ids = list(session.scalars(text("SELECT id FROM exchange_lines WHERE user_id = 'alice' "
                                        "ORDER BY occurred_at, id")))
        rows = turns.window_rows(session, "alice", ["SELECT unnest(CAST(:picked AS bigint[]))"], [], 2, None,
                                 lineterms.LineTerms(), RecallConfig(), arm_params={"picked": [ids[i] for i in picked]})
    got = sorted(ids.index(row[0]) for row in rows.rows)
    assert got == sorted({j for i in picked for j in range(i - 2, i + 3) if 0 <= j < 12})


def test_the_embedded_postgresql_runs_with_memory_sized_for_the_machine(db_engine):
    from services.embedded.postgres import memory_settings

    wanted = memory_settings()
    with db_engine.connect() as connection:
        sizes = {name: connection.execute(text("SELECT pg_size_bytes(current_setting(:name)), pg_size_bytes(:wanted)"),
                                          {"name": name, "wanted": wanted[name]}).one()
                 for name in ("shared_buffers", "effective_cache_size")}
        synchronised = connection.execute(text("SHOW synchronize_seqscans")).scalar()
    assert all(running == asked for running, asked in sizes.values()), sizes
    assert synchronised == "off"
    assert memory_settings(512 * 1024**2)["shared_buffers"] == "128MB"  # never below PostgreSQL's default
    assert memory_settings(64 * 1024**3)["shared_buffers"] == "1024MB"  # nor above 1 GB


def test_a_recall_asks_for_facts_and_episodes_only_when_the_user_has_some_and_sees_one_stored_since(db_engine):
    from sqlalchemy import event

    from services.memory.facts import remember_fact
    from services.memory.recall import recall

    embedder = HashEmbedder()
    _import_texts(db_engine, "alice", ["we planned the zanzibar trip", "the ferry leaves at noon"])
    statements: list[str] = []
    aside: list[str] = []  # sent on a second connection, from recall's other thread (services/memory/sidearms.py)
    main = threading.get_ident()
    with Session(db_engine) as session:
        event.listen(session.get_bind(), "before_cursor_execute", lambda *args: (
            statements if threading.get_ident() == main else aside).append(args[2]))
        hits = recall(session, embedder, "alice", "zanzibar trip", k=5, reinforce=False)
        assert hits and {hit.kind for hit in hits} == {"exchange"}
        # The opening statement (settings, which kinds she holds, a named speaker), BM25's terms, the turns; and
        # the BM25 arm on its own when the query's embedding or the exchange arms were still under way after the
        # terms. The terms come in two statements (the asked words, then their expansion) when the query's vector
        # was not there yet as the asked words were counted. The exchange arms: the search settings and the arms,
        # on the other connection. Last, the returned exchanges' texts (read for those few, not for every turn).
        lexical = "SELECT t.id FROM (((SELECT id, search FROM (SELECT id, search FROM exchange_lines"
        apart = [s for s in statements if s.startswith(lexical)]
        counted = [s for s in statements
                   if s.startswith("WITH s AS MATERIALIZED (SELECT id, search FROM exchange_lines")]
        assert len(statements) - len(apart) - len(counted) == 3 and len(apart) <= 1 and 1 <= len(counted) <= 2
        assert statements[-1].startswith("SELECT id, thread_id, session_id, user_text, reply FROM exchanges")
        assert len(aside) == 2 and "ORDER BY t.embedding <=>" in aside[1]
        assert not [s for s in statements if "t.id IN (" in s]  # no fact or episode candidates asked for
        remember_fact(session, embedder, "alice", "Alice's zanzibar trip is in May")
        statements.clear()
        hits = recall(session, embedder, "alice", "zanzibar trip", k=5, reinforce=False)
        assert "fact" in {hit.kind for hit in hits}
        assert len([s for s in statements if "t.id IN (" in s]) == 1  # facts now; still no episodes


@pytest.mark.parametrize("setting", ["df_cap = 0", "match_cap = 0", "common_match_cap = -1"])
def test_a_cap_below_one_is_refused_when_the_config_loads(tmp_path, setting):
    from services.memory.config import load_memory_config
    from services.settings import SettingsError

    (tmp_path / "memory.toml").write_text(f"[recall]\n{setting}\n")
    with pytest.raises(SettingsError, match=setting.split()[0]):
        load_memory_config(tmp_path)


def test_recall_statements_run_without_jit_compilation(db_engine):
    from services.memory import search
    from services.memory.recall import _open

    with Session(db_engine) as session:
        search.prepare_vector_search(session)
        assert session.scalar(text("SELECT current_setting('jit')")) == "off"
        session.rollback()
        # recall's first statement sets it with the others and still reads its own columns right.
        create_exchange(session, user_id="alice", user_text="hello", embedder=HashEmbedder())
        kinds, _, _, _ = _open(session, "alice", ("exchange", "fact", "episode"), RecallConfig(), [])
        assert kinds == ("exchange",)
        assert session.scalar(text("SELECT current_setting('jit')")) == "off"


def test_an_exchange_hit_shows_its_exchanges_texts_though_window_rows_leaves_them_out(db_engine):
    from services.memory.config import MemoryConfig
    from services.memory.recall import recall

    embedder = HashEmbedder()
    with Session(db_engine) as session:
        for i, (said, answered) in enumerate([("my violin lessons start soon", "which teacher?"),
                                              ("the garden needs water", "it rained"),
                                              ("violin or cello for a beginner", "violin is lighter")]):
            create_exchange(session, user_id="alice", user_text=said, reply=answered, embedder=embedder,
                            occurred_at=dt.datetime(2026, 3, 1 + i, tzinfo=dt.UTC))
        session.commit()
        hits = recall(session, embedder, "alice", "violin", k=3, config=MemoryConfig(), reinforce=False)
        stored = dict(session.execute(text("SELECT id, user_text || ' / ' || reply FROM exchanges")).tuples().all())
    exchange_hits = [hit for hit in hits if hit.kind == "exchange"]
    assert len(exchange_hits) >= 2
    assert all(f"{hit.meta['user_text']} / {hit.meta['reply']}" == stored[hit.id] for hit in exchange_hits)
