"""The query expansion's kNN over a person's kept vocabulary vectors (services/memory/vocabmatrix.py): the same
words and weights as PostgreSQL's exact kNN over every word, and a word the backfill adds (or one that leaves)
seen by the next recall."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import vector_text
from services.memory import vocabmatrix, vocabulary
from services.memory.config import RecallConfig
from services.memory.lineterms import line_terms
from services.memory.recall import _open, recall
from services.memory.vocabmatrix import MATRICES, SIZE_SQL
from tests.fake_embedder import HashEmbedder
from tests.memory_builders import create_exchange, create_user

pytestmark = pytest.mark.integration


def _add_words(session: Session, user: str, words: list[str], lexemes: list[str], vectors: np.ndarray) -> None:
    session.execute(text(
        "INSERT INTO vocabulary (user_id, word, lexeme, embedding) SELECT :user, w, x, CAST(v AS vector) "
        "FROM unnest(CAST(:words AS text[]), CAST(:lexemes AS text[]), CAST(:vectors AS text[])) AS n(w, x, v)"),
        {"user": user, "words": words, "lexemes": lexemes, "vectors": [vector_text(v) for v in vectors]})


def _expansion(session: Session, user: str, query: np.ndarray, among: list[str] | None,
               min_similarity: float) -> list[tuple[str, float]]:
    params: dict = {"user": user}
    nearest = vocabulary.nearest_sql(params, query, 10, min_similarity, 0.3, among)
    return sorted(session.execute(text(f"WITH asked AS (SELECT 'w0001' AS lexeme) {nearest}"), params).tuples().all())


def test_the_kept_vectors_pick_the_same_words_and_weights_as_the_exact_sql_knn(db_engine):
    rng = np.random.default_rng(11)
    # Clusters of near twins (cosines a few 1e-6 apart: float32 rounding could reorder them) among plain words;
    # some words share a lexeme (the best cosine of its words counts).
    centres = rng.normal(size=(40, 384))
    twins = np.repeat(centres, 10, axis=0) + rng.normal(scale=2e-3, size=(400, 384))
    vectors = np.vstack([twins, rng.normal(size=(300, 384))]).astype(np.float32)
    words = [f"w{i:04d}" for i in range(len(vectors))]
    lexemes = [f"w{i - i % 3:04d}" if i % 7 == 0 else word for i, word in enumerate(words)]
    queries = np.vstack([centres[:20] + rng.normal(scale=0.3, size=(20, 384)), rng.normal(size=(20, 384))])
    MATRICES.clear()
    with Session(db_engine) as session:
        create_user(session, user_id="matrix-a")
        _add_words(session, "matrix-a", words, lexemes, vectors)
        size = session.scalar(text(SIZE_SQL), {"user": "matrix-a"})
        assert size == len(words)
        narrowed = 0
        for query in queries:
            among = MATRICES.nearest(session, "matrix-a", size, query, 10)
            assert among is not None and 10 <= len(among) < len(words)
            narrowed += len(among) > 10
            for min_similarity in (-1.0, 0.05):
                expected = _expansion(session, "matrix-a", query, None, min_similarity)
                assert _expansion(session, "matrix-a", query, among, min_similarity) == expected
        assert narrowed  # some query's near twins were within the margin of its tenth word


def _made_up(index: int) -> str:
    """A word of letters no dictionary holds (its lexeme is itself)."""
    return "zq" + "".join(chr(97 + index // 26 ** place % 26) for place in range(3)) + "x"


def test_a_word_added_or_removed_is_seen_by_the_next_recall(db_engine):
    rng = np.random.default_rng(5)
    config = RecallConfig(expansion_min_similarity=0.0)
    query = rng.normal(size=384).astype(np.float32)
    words = [_made_up(i) for i in range(300)]
    MATRICES.clear()
    with Session(db_engine) as session:
        create_user(session, user_id="matrix-b")
        create_exchange(session, user_id="matrix-b", user_text="The harbour " + " ".join(words + ["zqnewx"]))
        _add_words(session, "matrix-b", words, words, rng.normal(size=(300, 384)).astype(np.float32))

        def expanded() -> set[str]:
            _, _, _, size = _open(session, "matrix-b", ("exchange",), config, [])
            assert size == session.scalar(text("SELECT count(*) FROM vocabulary WHERE user_id = 'matrix-b'"))
            return set(line_terms(session, "matrix-b", "harbour", config, query, size).terms.lexemes) - {"harbour"}

        before = expanded()
        assert len(before) == 10 and len(vocabmatrix.MATRICES._kept) == 1
        _add_words(session, "matrix-b", ["zqnewx"], ["zqnewx"], query[None, :])  # the backfill's new word
        assert "zqnewx" in expanded()
        session.execute(text("DELETE FROM vocabulary WHERE user_id = 'matrix-b' AND word = 'zqnewx'"))
        assert expanded() == before


def test_the_kept_words_stay_within_their_budget_the_least_recently_used_person_leaving(db_engine, monkeypatch):
    rng = np.random.default_rng(2)
    monkeypatch.setattr(vocabmatrix, "MAX_KEPT_WORDS", 500)
    MATRICES.clear()
    with Session(db_engine) as session:
        for user in ("matrix-c", "matrix-d"):
            create_user(session, user_id=user)
            _add_words(session, user, [_made_up(i) for i in range(300)], [_made_up(i) for i in range(300)],
                       rng.normal(size=(300, 384)).astype(np.float32))
            assert MATRICES.nearest(session, user, 300, rng.normal(size=384), 10) is not None
        assert [user for _, user in MATRICES._kept] == ["matrix-d"]


def test_a_person_with_a_zero_vector_keeps_the_sql_knn(db_engine):
    vectors = np.random.default_rng(4).normal(size=(30, 384)).astype(np.float32)
    vectors[7] = 0.0  # pgvector's cosine with it is NaN, which its ORDER BY puts after every distance
    MATRICES.clear()
    with Session(db_engine) as session:
        create_user(session, user_id="matrix-e")
        _add_words(session, "matrix-e", [_made_up(i) for i in range(30)], [_made_up(i) for i in range(30)], vectors)
        assert MATRICES.nearest(session, "matrix-e", 30, vectors[0], 10) is None


class _HeldEmbedder(HashEmbedder):
    """Embeds only once the person's kept vectors were read (or after a deadlock breaker), noting the order."""

    def __init__(self, read: threading.Event, order: list[str]) -> None:
        super().__init__(cache_size=0)
        self.read, self.order = read, order

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.read.wait(timeout=10)  # only a deadlock breaker: a recall reading them after the vector never sets it
        self.order.append("embedded")
        return super()._encode(texts)


def test_stale_kept_vectors_are_read_while_the_model_embeds_the_query(db_engine):
    rng = np.random.default_rng(9)
    words = [_made_up(i) for i in range(200)]
    read, order = threading.Event(), []

    def watch(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if "vector_send(embedding)" in statement:
            order.append("vectors read")
            read.set()

    MATRICES.clear()
    with Session(db_engine) as session:
        create_user(session, user_id="matrix-f")
        create_exchange(session, user_id="matrix-f", user_text="The harbour " + " ".join(words))
        _add_words(session, "matrix-f", words, words, rng.normal(size=(200, 384)).astype(np.float32))
        session.commit()
        event.listen(db_engine, "before_cursor_execute", watch)
        try:
            hits = recall(session, _HeldEmbedder(read, order), "matrix-f", "the harbour", reinforce=False,
                          config=RecallConfig(expansion_min_similarity=0.0))
        finally:
            event.remove(db_engine, "before_cursor_execute", watch)
    assert hits
    assert order == ["vectors read", "embedded"]


def test_a_stale_person_reads_only_the_new_words_vectors_and_picks_what_a_full_read_picks(db_engine):
    rng = np.random.default_rng(13)
    words = [_made_up(i) for i in range(120)]
    vectors = rng.normal(size=(120, 384)).astype(np.float32)
    queries = rng.normal(size=(20, 384)).astype(np.float32)
    read: list[int] = []

    def count(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if "vector_send(embedding)" in statement:
            read.append(cursor.rowcount)

    MATRICES.clear()
    with Session(db_engine) as session:
        create_user(session, user_id="matrix-g")
        _add_words(session, "matrix-g", words[:100], words[:100], vectors[:100])
        assert MATRICES.nearest(session, "matrix-g", 100, queries[0], 10) is not None
        _add_words(session, "matrix-g", words[100:], words[100:], vectors[100:])  # the backfill's 20 new words
        session.execute(text("DELETE FROM vocabulary WHERE user_id = 'matrix-g' AND word = ANY(:gone)"),
                        {"gone": words[:5]})  # and 5 forgotten
        event.listen(db_engine, "after_cursor_execute", count)
        try:
            refreshed = [MATRICES.nearest(session, "matrix-g", 115, query, 10) for query in queries]
        finally:
            event.remove(db_engine, "after_cursor_execute", count)
        MATRICES.clear()
        full = [MATRICES.nearest(session, "matrix-g", 115, query, 10) for query in queries]
    assert read == [20]  # the new words' vectors only
    assert all(picked is not None for picked in refreshed)
    assert [sorted(picked) for picked in refreshed] == [sorted(picked) for picked in full]


def test_a_matrix_brought_up_to_date_equals_one_read_afresh_and_reads_only_the_new_vectors(db_engine, monkeypatch):
    rng = np.random.default_rng(8)
    words = [_made_up(i) for i in range(200)]
    MATRICES.clear()
    with Session(db_engine) as session:
        create_user(session, user_id="matrix-f")
        _add_words(session, "matrix-f", words, words, rng.normal(size=(200, 384)).astype(np.float32))
        assert MATRICES._get(session, "matrix-f", 200) is not None
        added = [_made_up(i) for i in range(200, 203)]
        _add_words(session, "matrix-f", added, added, rng.normal(size=(3, 384)).astype(np.float32))
        session.execute(text("DELETE FROM vocabulary WHERE user_id = 'matrix-f' AND word = ANY(:gone)"),
                        {"gone": words[:2]})
        assert MATRICES._get(session, "matrix-f", 201) is not None  # a word gone: its row dropped, the new ones read
        _add_words(session, "matrix-f", [_made_up(300)], [_made_up(300)], rng.normal(size=(1, 384)).astype(np.float32))
        with monkeypatch.context() as patched:  # every vector read again would fail
            patched.setattr(vocabmatrix, "_VECTORS", "SELECT 1 / 0")
            updated = MATRICES._get(session, "matrix-f", 202)
        MATRICES.clear()
        afresh = MATRICES._get(session, "matrix-f", 202)
    assert updated is not None and afresh is not None and sorted(updated.words) == sorted(afresh.words)
    order = [updated.words.index(word) for word in afresh.words]
    assert np.array_equal(updated.vectors[order], afresh.vectors)
    assert np.array_equal(updated.lengths[order], afresh.lengths)
