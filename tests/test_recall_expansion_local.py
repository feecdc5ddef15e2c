"""The query expansion without its statement (services/memory/lineterms.py ``expanded_terms``): the person's kept
vectors give the cosines (``vocabmatrix``, in double precision where pgvector sums float32s: ~1e-7 apart) and the
kept counts every sampled word's (``count_sample``), so recall sends no statement between the query vector and the
BM25 arm; the terms are the ones the statement gives, the same words at the same counts, weights to ~1e-7."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker, vector_text
from services.memory import lineterms, vocabmatrix
from services.memory.config import RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.termcounts import COUNTS
from services.memory.vocabmatrix import MATRICES
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange

pytestmark = pytest.mark.integration

# A sample smaller than the history (its counts scale), every word near enough to be taken.
CONFIG = RecallConfig(length_sample=30, expansion_min_similarity=0.0)
QUERY = "harbour boats"
EXPANSION_STATEMENT = "true AS added, q.known"  # the expansion's own statement (lineterms._expansion_rows)
WORDS = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(60)]  # made up: each its own lexeme


def _history(db_engine, user: str) -> int:  # type: ignore[no-untyped-def]
    """80 turns saying the harbour and some of ``WORDS`` (the sample holds some words, not others); the words in
    the person's vocabulary with random vectors. Returns the vocabulary's size."""
    rng = np.random.default_rng(21)
    lines, _, _ = parse_lines(json.dumps({
        "session": "s", "role": "user" if i % 2 == 0 else "assistant",
        "text": "the harbour boats " + " ".join(rng.choice(WORDS[: 20 + i // 2], size=4, replace=False)),
        "timestamp": f"2026-02-01T{i // 60:02d}:{i % 60:02d}:00Z"}) for i in range(80))
    store_records(make_sessionmaker(db_engine), HashEmbedder(), user, pair_exchanges(lines), batch_size=16)
    vectors = rng.normal(size=(len(WORDS), 384)).astype(np.float32)
    with Session(db_engine) as session, session.begin():
        session.execute(text(
            "INSERT INTO vocabulary (user_id, word, lexeme, embedding) SELECT :user, w, "
            "(tsvector_to_array(to_tsvector('english', w)))[1], CAST(v AS vector) "
            "FROM unnest(CAST(:words AS text[]), CAST(:vectors AS text[])) AS n(w, v)"),
            {"user": user, "words": WORDS, "vectors": [vector_text(v) for v in vectors]})
    return len(WORDS)


def _statements(db_engine) -> list[str]:  # type: ignore[no-untyped-def]
    sent: list[str] = []
    event.listen(db_engine, "before_cursor_execute", lambda conn, cursor, statement, *args: sent.append(statement))
    return sent


def _expanded(session: Session, user: str, vector: np.ndarray, size: int) -> lineterms.LineTerms:
    """The terms as recall takes them while the model embeds: the asked words, the sample's counts, then the
    expansion once the vector is there."""
    asked = lineterms.asked_terms(session, user, QUERY, CONFIG)
    MATRICES.warm(session, user, size, asked.kept.read_at if asked.kept else 0.0)
    lineterms.count_sample(session, user, asked, CONFIG)
    return lineterms.expanded_terms(session, user, asked, CONFIG, vector, size)


def _by_statement(session: Session, user: str, vector: np.ndarray, size: int) -> lineterms.LineTerms:
    """The terms by one statement, its kNN and counts in SQL, nothing kept."""
    COUNTS.clear()
    MATRICES.clear()
    return lineterms.line_terms(session, user, QUERY, CONFIG, vector, None)


def _terms(found: lineterms.LineTerms) -> tuple:
    """The terms; each weight as a ``Near`` value: the statement's cosines are pgvector's float32 sums, the process's
    are summed in double (~1e-7 apart)."""
    weights = tuple(Near(weight) for weight in found.terms.weights)
    return found.terms.lexemes, weights, found.terms.filter_lexemes, found.total, found.avg_len, found.scale


class Near(float):
    """A float equal to another within a relative 1e-6."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, float) and abs(self - other) <= 1e-6 * max(abs(self), abs(other))

    __hash__ = float.__hash__


def test_the_expansion_sends_no_statement_and_finds_the_statements_terms(db_engine):
    size = _history(db_engine, "local-a")
    queries = np.random.default_rng(5).normal(size=(8, 384)).astype(np.float32)
    sent = _statements(db_engine)
    with Session(db_engine) as session:
        expected = [_by_statement(session, "local-a", query, size) for query in queries]
        COUNTS.clear()
        MATRICES.clear()
        sent.clear()
        found = [_expanded(session, "local-a", query, size) for query in queries]
    assert [_terms(terms) for terms in found] == [_terms(terms) for terms in expected]
    assert all(len(terms.terms.lexemes) > 2 for terms in found)  # asked words and expansion words
    assert not any(EXPANSION_STATEMENT in statement for statement in sent)


def _fresh(db_engine, user: str, seed: int, count: int) -> tuple[int, np.ndarray]:  # type: ignore[no-untyped-def]
    """``user``'s history with nothing kept yet: its vocabulary's size and ``count`` random query vectors."""
    size = _history(db_engine, user)
    COUNTS.clear()
    MATRICES.clear()
    return size, np.random.default_rng(seed).normal(size=(count, 384)).astype(np.float32)


def test_after_turns_are_added_the_sample_counts_still_serve_and_give_the_recounted_terms(db_engine):
    size, queries = _fresh(db_engine, "local-f", seed=7, count=5)
    with Session(db_engine) as session:
        for query in queries[:3]:
            _expanded(session, "local-f", query, size)
        counted = COUNTS.get(session, "local-f", CONFIG)
        assert counted is not None and counted.sample_counts is not None
        for i in range(2):  # a chatting person's new turns, stored after the sample
            create_exchange(session, user_id="local-f", user_text=f"the harbour boats {WORDS[-1]} again {i}",
                            reply="noted")
        session.commit()
        sent = _statements(db_engine)
        found = [_terms(_expanded(session, "local-f", query, size)) for query in queries[3:]]
        grown = COUNTS.get(session, "local-f", CONFIG)
        assert grown is not counted and grown.lines == counted.lines + 4  # brought up to date, not read again
        assert grown.sample_counts is counted.sample_counts
        assert not any(EXPANSION_STATEMENT in statement or "GROUP BY x" in statement for statement in sent)
        assert found == [_terms(_by_statement(session, "local-f", query, size)) for query in queries[3:]]


def test_a_forgotten_word_is_never_an_expansion_term_though_the_word_count_stayed(db_engine):
    size, queries = _fresh(db_engine, "local-g", seed=8, count=3)
    with Session(db_engine) as session:
        for query in queries:
            _expanded(session, "local-g", query, size)
        gone = WORDS[5]
        nearest_gone = np.frombuffer(session.scalar(text(
            "SELECT vector_send(embedding) FROM vocabulary WHERE user_id = 'local-g' AND word = :w"), {"w": gone}),
            dtype=">f4")[1:].astype(np.float32)
        assert gone in _expanded(session, "local-g", nearest_gone, size).terms.lexemes
        # A forget (a turn deleted, its word pruned) and a backfill's new word between two recalls: the same count.
        session.execute(text("DELETE FROM exchange_lines WHERE id = (SELECT max(id) FROM exchange_lines "
                             "WHERE user_id = 'local-g')"))
        session.execute(text(
            "INSERT INTO vocabulary (user_id, word, lexeme, embedding) SELECT 'local-g', 'zqnewx', 'zqnewx', "
            "embedding FROM vocabulary WHERE user_id = 'local-g' AND word = :w"), {"w": gone})
        session.execute(text("DELETE FROM vocabulary WHERE user_id = 'local-g' AND word = :w"), {"w": gone})
        session.commit()
        assert session.scalar(text("SELECT count(*) FROM vocabulary WHERE user_id = 'local-g'")) == size
        after = _terms(_expanded(session, "local-g", nearest_gone, size))
        assert gone not in after[0] and "zqnewx" in after[0]
        assert after == _terms(_by_statement(session, "local-g", nearest_gone, size))


def test_the_sample_counts_are_the_statements_counts_of_every_word(db_engine):
    _history(db_engine, "local-c")
    COUNTS.clear()
    with Session(db_engine) as session:
        asked = lineterms.asked_terms(session, "local-c", QUERY, CONFIG)
        lineterms.count_sample(session, "local-c", asked, CONFIG)
        kept = asked.kept
        assert kept is not None and kept.sample_counts
        sample = f"SELECT search FROM exchange_lines WHERE user_id = 'local-c' LIMIT {CONFIG.length_sample}"
        for lexeme in [*WORDS, "harbour", "boat", "zqnowherex"]:
            counted = session.scalar(text(
                f"SELECT count(*) FROM ({sample}) s WHERE search @@ CAST(quote_literal(:x) AS tsquery)"), {"x": lexeme})
            assert kept.sample_count(lexeme) == counted
        assert kept.sample_count("zqnowherex") == 0 and kept.sample_count("harbour") == CONFIG.length_sample
        assert 0 < sum(kept.sample_count(word) == 0 for word in WORDS) < len(WORDS)  # some words outside the sample


def test_sample_counts_read_after_the_turns_changed_are_not_kept(db_engine):
    _history(db_engine, "local-d")
    COUNTS.clear()
    with Session(db_engine) as session:
        asked = lineterms.asked_terms(session, "local-d", QUERY, CONFIG)
        session.execute(text("UPDATE exchange_line_counts SET lines = lines WHERE user_id = 'local-d'"))  # new xmin
        lineterms.count_sample(session, "local-d", asked, CONFIG)
        assert asked.kept is not None and asked.kept.sample_counts is None


def test_the_kept_vectors_keep_their_words_lexemes_in_order(db_engine):
    size = _history(db_engine, "local-e")
    MATRICES.clear()
    with Session(db_engine) as session:
        matrix = MATRICES._get(session, "local-e", size)
        assert matrix is not None
        stored = dict(session.execute(text("SELECT word, lexeme FROM vocabulary WHERE user_id = 'local-e'")).tuples()
                      .all())
    assert [stored[word] for word in matrix.words] == matrix.lexemes
    assert vocabmatrix.MAX_WORDS >= size
