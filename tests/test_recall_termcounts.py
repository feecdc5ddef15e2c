"""The query terms' counts kept between recalls (services/memory/termcounts.py): the same terms as counted
afresh, and counted afresh once the person's turns change."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import lineterms, vocabulary
from services.memory.config import RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.termcounts import COUNTS
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration

# A sample smaller than her history: a word the sample barely holds is then counted exactly over every turn.
CONFIG = RecallConfig(length_sample=10)
QUERY = "zanzibar ferries and gardens"


def _import(db_engine, user: str, n: int) -> None:  # type: ignore[no-untyped-def]
    texts = ["the zanzibar ferry was late", "we planted the gardens", "boats in the harbour", "a quiet evening"]
    lines, _, _ = parse_lines(json.dumps({"session": f"s{i % 3}", "role": "user" if i % 2 == 0 else "assistant",
                                          "text": f"{texts[i % len(texts)]} number {i}",
                                          "timestamp": f"2026-02-01T{i // 60:02d}:{i % 60:02d}:00Z"})
                              for i in range(n))
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(lines), batch_size=16)


def _afresh(session: Session, *args, **kwargs) -> lineterms.LineTerms:  # type: ignore[no-untyped-def]
    COUNTS.clear()
    return lineterms.line_terms(session, *args, **kwargs)


def _terms_statements(session: Session) -> list[tuple[str, dict]]:
    """The terms statements (they open with the sample's CTE) sent from now on, with their parameters."""
    sent: list[tuple[str, dict]] = []
    event.listen(session.get_bind(), "before_cursor_execute", lambda conn, cursor, statement, parameters, *args: (
        sent.append((statement, parameters)) if statement.startswith("WITH s AS") else None))
    return sent


def _reads_the_sample(session: Session, statement: str, parameters: dict) -> bool:
    cursor = session.connection().connection.driver_connection.cursor()
    cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + statement, parameters)
    plan = [row[0] for row in cursor.fetchall()]
    sample = plan[plan.index("  CTE s") + 1]
    return "never executed" not in sample


def _counted_again(session: Session) -> bool:
    """Whether alice's next terms read the sample again (the kept counts not taken) and equal the terms counted
    afresh."""
    sent = _terms_statements(session)
    found = lineterms.line_terms(session, "alice", QUERY, CONFIG)
    return _reads_the_sample(session, *sent[-1]) and found == _afresh(session, "alice", QUERY, CONFIG)


def test_kept_counts_give_the_terms_counted_afresh_until_a_new_turn_changes_them(db_engine):
    _import(db_engine, "alice", 80)
    with Session(db_engine) as session:
        fresh = _afresh(session, "alice", QUERY, CONFIG)
        assert fresh.total == 80 and "zanzibar" in fresh.terms.lexemes
        kept = COUNTS.get(session, "alice", CONFIG)
        assert kept is not None and kept.exact["zanzibar"] is not None  # counted exactly, and kept
        assert lineterms.line_terms(session, "alice", QUERY, CONFIG) == fresh
        assert lineterms.line_terms(session, "alice", "gardens", CONFIG) == _afresh(session, "alice", "gardens", CONFIG)
        before = fresh.terms.weights[fresh.terms.lexemes.index("zanzibar")]
        create_exchange(session, user_id="alice", user_text="zanzibar again", reply="zanzibar is lovely",
                        embedder=HashEmbedder(), occurred_at=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
        session.commit()
        after = lineterms.line_terms(session, "alice", QUERY, CONFIG)
        assert after == _afresh(session, "alice", QUERY, CONFIG) and after.total == 82
        assert after.terms.weights[after.terms.lexemes.index("zanzibar")] < before  # a commoner word now


def test_a_deleted_turn_and_another_database_state_are_never_read_from_kept_counts(db_engine):
    _import(db_engine, "alice", 40)
    with Session(db_engine) as session:
        lineterms.line_terms(session, "alice", QUERY, CONFIG)
        session.execute(text("DELETE FROM exchange_lines WHERE user_id = 'alice' AND text LIKE '%zanzibar%'"))
        session.commit()
        after = lineterms.line_terms(session, "alice", QUERY, CONFIG)
        assert after == _afresh(session, "alice", QUERY, CONFIG) and after.total == 30
        # Emptied and filled again with as many turns: other counts, told apart by the count row's version.
        session.execute(text("TRUNCATE exchange_lines CASCADE"))
        session.commit()
    _import(db_engine, "alice", 30)
    with Session(db_engine) as session:
        again = lineterms.line_terms(session, "alice", QUERY, CONFIG)
        assert again == _afresh(session, "alice", QUERY, CONFIG) and again != after


def test_with_kept_counts_a_recall_reads_no_sample_and_expands_to_the_same_terms(db_engine):
    _import(db_engine, "alice", 80)
    sessions = make_sessionmaker(db_engine)
    vocabulary.fill_all(sessions, HashEmbedder())
    config = RecallConfig(length_sample=10, expansion_min_similarity=-1.0)  # every nearest word joins
    vector = HashEmbedder().embed(QUERY)
    with Session(db_engine) as session:
        expanded = _afresh(session, "alice", QUERY, config, vector)
        assert config.expands and len(expanded.terms.lexemes) > 3  # words were added
        sent = _terms_statements(session)
        asked = lineterms.asked_terms(session, "alice", QUERY, config)
        assert lineterms.expanded_terms(session, "alice", asked, config, vector) == expanded
        assert lineterms.line_terms(session, "alice", QUERY, config, vector) == expanded
        # Every count was kept: no statement read the sample (a CTE is computed when first read).
        assert len(sent) == 3 and not any(_reads_the_sample(session, *item) for item in sent)
        COUNTS.clear()
        lineterms.asked_terms(session, "alice", QUERY, config)
        assert _reads_the_sample(session, *sent[-1])  # and without them it is read


def test_kept_lexemes_reach_postgresql_as_the_same_strings(db_engine):
    from services.memory.termcounts import Kept, TermRow

    lexemes = ["plain", 'a "quoted" one', "back\\slash", "comma,inside", "{brace}", "o'hara", "NULL", ""]
    kept = Kept("1/2", 10, 5.0)
    kept.learn([TermRow(lexeme, 1.0, False, 1, 10, 5.0, 10, None) for lexeme in lexemes[:4]])
    kept.params()  # sent once, then more lexemes learned
    kept.learn([TermRow(lexeme, 1.0, True, 1, 10, 5.0, 10, None) for lexeme in lexemes[4:]])
    with db_engine.connect() as connection:
        sent = connection.execute(text("SELECT CAST(:known_sampled AS text[]), CAST(:known_asked AS text[])"),
                                  kept.params()).one()
    assert list(sent) == [lexemes, lexemes[:4]]


def _add_turns(session: Session, texts: list[str], user: str = "alice") -> None:
    for i, words in enumerate(texts):
        create_exchange(session, user_id=user, user_text=words, reply=f"noted {i}", embedder=HashEmbedder(),
                        occurred_at=dt.datetime(2026, 3, 1, i, tzinfo=dt.UTC))
    session.commit()


def test_counts_brought_up_to_date_after_added_turns_equal_a_recount_without_reading_the_sample(db_engine):
    _import(db_engine, "alice", 80)
    with Session(db_engine) as session:
        lineterms.line_terms(session, "alice", QUERY, CONFIG)
        before = COUNTS.get(session, "alice", CONFIG)
        _add_turns(session, ["zanzibar at dawn", "the zanzibar gardens again", "nothing of note"])
        sent = _terms_statements(session)
        updated = lineterms.line_terms(session, "alice", QUERY, CONFIG)
        assert not _reads_the_sample(session, *sent[-1])  # brought up to date, not counted again
        kept = COUNTS.get(session, "alice", CONFIG)
        assert kept is not before and kept.lines == 86 and kept.exact["zanzibar"] == before.exact["zanzibar"] + 2
        assert updated == _afresh(session, "alice", QUERY, CONFIG) and updated.total == 86
        # And again from the counts brought up to date: the next turn counts once, not twice.
        lineterms.line_terms(session, "alice", QUERY, CONFIG)
        _add_turns(session, ["zanzibar once more"])
        again = lineterms.line_terms(session, "alice", QUERY, CONFIG)
        assert again == _afresh(session, "alice", QUERY, CONFIG) and again.total == 88


def test_a_removed_or_late_committed_turn_makes_the_counts_read_again(db_engine):
    _import(db_engine, "alice", 80)
    with Session(db_engine) as session:
        lineterms.line_terms(session, "alice", QUERY, CONFIG)
        # One turn removed and one added: the line count is unchanged, the counts are not.
        session.execute(text("DELETE FROM exchange_lines WHERE id = (SELECT min(id) FROM exchange_lines "
                             "WHERE user_id = 'alice' AND text LIKE '%zanzibar%')"))
        _add_turns(session, ["the harbour"])
        assert _counted_again(session)
        # A line numbered before the kept counts' highest id but committed after them is not one of "the added".
        free = session.scalar(text("SELECT max(id) FROM exchange_lines"))
        session.execute(text("UPDATE exchange_lines SET id = id + 1000 WHERE id = :free"), {"free": free})
        session.commit()
        _afresh(session, "alice", QUERY, CONFIG)  # (a row rewritten in place versions nothing: read afresh)
        assert COUNTS.get(session, "alice", CONFIG).top == free + 1000
        session.execute(text(
            "INSERT INTO exchange_lines (id, user_id, exchange_id, thread_id, position, speaker, text, occurred_at) "
            "SELECT :free, user_id, exchange_id, thread_id, 5, speaker, 'zanzibar late', occurred_at "
            "FROM exchange_lines WHERE user_id = 'alice' ORDER BY id LIMIT 1"), {"free": free})
        session.commit()
        assert _counted_again(session)


def test_a_capped_count_stays_capped_and_a_sampled_one_unchanged_when_turns_are_added():
    from services.memory.termcounts import Kept

    kept = Kept("9/1", 10, 5.0, {"rare": 1, "common": 8}, {"rare": 3, "capped": 50, "common": None}, lines=90, top=7)
    newer = kept.grown("11/2", 92, 9, ["rare", "capped", "common", "rare"], cap=50)
    assert newer.exact == {"rare": 5, "capped": 50, "common": None} and newer.sampled == kept.sampled
    assert (newer.version, newer.lines, newer.top, newer.n) == ("11/2", 92, 9, 10)
    assert kept.exact["rare"] == 3  # the counts a statement may still be reading are left as they were


def test_a_recall_after_an_added_turn_finds_it_with_the_counts_brought_up_to_date(db_engine):
    from services.memory.recall import recall

    _import(db_engine, "alice", 80)
    config = RecallConfig(length_sample=10, expansion_weight=0.0)
    with Session(db_engine) as session:
        first = recall(session, HashEmbedder(), "alice", "zanzibar quokka sightings", config=config, reinforce=False)
        assert first and all("quokka" not in hit.text for hit in first)
        kept = COUNTS.get(session, "alice", config)
        _add_turns(session, ["we saw a quokka on zanzibar"])
        found = recall(session, HashEmbedder(), "alice", "zanzibar quokka sightings", config=config, reinforce=False)
        assert "quokka" in found[0].text
        assert COUNTS.get(session, "alice", config).version != kept.version  # brought up to date, then used


def test_a_turn_stored_in_free_space_before_the_sample_is_counted_in_as_a_recount_would(db_engine):
    """The sample is her first turns by id, not the table's first rows: a new turn stored in free space at the
    table's start (a migration's rewrite leaves it) does not join it, so the counts are brought up to date."""
    _import(db_engine, "alice", 80)
    with db_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("DELETE FROM exchange_lines WHERE id IN (SELECT id FROM exchange_lines "
                                "WHERE user_id = 'alice' ORDER BY id LIMIT 6)"))
        connection.execute(text("VACUUM exchange_lines"))
    with Session(db_engine) as session:
        _afresh(session, "alice", QUERY, CONFIG)
        _add_turns(session, ["zanzibar in the free space"])
        assert session.scalar(text("SELECT ctid < (SELECT max(ctid) FROM exchange_lines WHERE user_id = 'alice' "
                                   "AND id IN (SELECT id FROM exchange_lines WHERE user_id = 'alice' ORDER BY id "
                                   "LIMIT 10)) FROM exchange_lines WHERE text = 'zanzibar in the free space'"))
        sent = _terms_statements(session)
        found = lineterms.line_terms(session, "alice", QUERY, CONFIG)
        assert not _reads_the_sample(session, *sent[-1])
        assert found == _afresh(session, "alice", QUERY, CONFIG)


def test_the_sample_is_the_persons_own_first_turns_whoever_is_stored_before_them(db_engine):
    """Many people in one table: her sample is her first length_sample turns by id, whatever the table's order
    (her first turns rewritten, so stored last; another person's rows before hers)."""
    _import(db_engine, "bob", 120)
    _import(db_engine, "alice", 80)
    with db_engine.begin() as connection:
        connection.execute(text("UPDATE exchange_lines SET text = 'a long winding account of seven different "
                                "harbours visited' WHERE id IN (SELECT id FROM exchange_lines WHERE user_id = 'alice' "
                                "ORDER BY id LIMIT 5)"))
    with Session(db_engine) as session:
        terms = _afresh(session, "alice", QUERY, CONFIG)
        first = session.scalar(text("SELECT avg(length(search)) FROM (SELECT search FROM exchange_lines "
                                    "WHERE user_id = 'alice' ORDER BY id LIMIT 10) s"))
        by_storage = session.scalar(text("SELECT avg(length(search)) FROM (SELECT search FROM exchange_lines "
                                         "WHERE user_id = 'alice' ORDER BY ctid LIMIT 10) s"))
        assert terms.total == 80 and float(first) != pytest.approx(float(by_storage))
        assert terms.avg_len == pytest.approx(float(first))


def test_a_turn_rewritten_in_place_makes_the_counts_read_again(db_engine):
    _import(db_engine, "alice", 80)
    with Session(db_engine) as session:
        lineterms.line_terms(session, "alice", QUERY, CONFIG)
        session.execute(text("UPDATE exchange_lines SET text = 'a quiet harbour' WHERE id = (SELECT max(id) "
                             "FROM exchange_lines WHERE user_id = 'alice' AND text LIKE '%zanzibar%')"))
        session.commit()
        assert _counted_again(session)
