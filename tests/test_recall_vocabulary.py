"""Query expansion by the person's own vocabulary (services/memory/vocabulary.py, migration 0013): the
backfill embeds each new word of a person's turns once; recall adds the words nearest the question to its
BM25 terms, so a turn that answers in other words ("Pottery class again." for "What pastimes ...") matches."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker, vector_text
from services.memory import vocabulary
from services.memory.config import MemoryConfig, RecallConfig, load_memory_config
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.lineterms import line_terms
from services.memory.recall import recall
from services.memory.vectors import fill_all
from services.settings import PROJECT_ROOT, SettingsError
from tests.memory_builders import create_exchange
from tests.test_memory_speakers import CountingEmbedder

pytestmark = pytest.mark.integration

NOW = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)
CONVERSATION = [
    ("Caroline", "How was your week, Melanie?"), ("Melanie", "Pottery class again."),
    ("Caroline", "Did the kids like the museum?"), ("Melanie", "They loved the dinosaur hall."),
    ("Caroline", "Any plans for summer?"), ("Melanie", "Camping with family in the mountains."),
    ("Caroline", "My counselling course starts soon."), ("Melanie", "You will be great at it."),
]
QUESTION = "What pastimes does Melanie enjoy?"


@pytest.fixture
def sessions(db_engine):
    return make_sessionmaker(db_engine)


def _import(sessions, user: str, embedder: CountingEmbedder) -> None:
    lines = [json.dumps({"session": "s1", "speaker": speaker, "text": body, "external_id": f"D1:{index}",
                         "timestamp": (NOW - dt.timedelta(days=30, seconds=-30 * index)).isoformat()})
             for index, (speaker, body) in enumerate(CONVERSATION, start=1)]
    parsed, bad, _ = parse_lines(lines)
    assert not bad
    store_records(sessions, embedder, user, pair_exchanges(parsed))
    fill_all(sessions, embedder)


def _words(db_engine, user: str) -> dict[str, str]:
    with Session(db_engine) as session:
        return dict(session.execute(text("SELECT word, lexeme FROM vocabulary WHERE user_id = :u"), {"u": user}).all())


def test_the_backfill_embeds_each_new_word_of_a_persons_turns_once(sessions, db_engine):
    embedder = CountingEmbedder()
    _import(sessions, "vocab-a", embedder)
    embedder.texts.clear()
    added = vocabulary.fill_all(sessions, embedder)
    words = _words(db_engine, "vocab-a")
    assert words["pottery"] == "potteri" and words["mountains"] == "mountain" and words["melanie"] == "melani"
    assert not {"the", "was", "with", "in", "it"} & words.keys()  # stop words and short words: no lexeme
    assert added >= len(words) and set(embedder.texts) >= words.keys()
    with Session(db_engine) as session:
        assert not vocabulary.pending(session)
    # Nothing new: nothing embedded again. A chat turn later brings only its own new words.
    embedder.texts.clear()
    assert vocabulary.fill_all(sessions, embedder) == 0 and embedder.texts == []
    with Session(db_engine) as session:
        create_exchange(session, user_id="vocab-a", user_text="I took up pottery and archery", reply="Nice!",
                        embedder=embedder)
        session.commit()
        assert vocabulary.pending(session)
    embedder.texts.clear()
    vocabulary.fill_all(sessions, embedder)
    assert "archery" in embedder.texts and "pottery" not in embedder.texts
    assert "archery" in _words(db_engine, "vocab-a") and "archery" not in _words(db_engine, "vocab-b")


def test_the_question_gains_the_persons_nearest_words_at_a_lower_weight(sessions, db_engine):
    embedder = CountingEmbedder()
    _import(sessions, "vocab-c", embedder)
    vocabulary.fill_all(sessions, embedder)
    shipped = load_memory_config(PROJECT_ROOT / "configs").recall
    assert shipped.expansion_words > 0 and shipped.expansion_weight > 0
    question = embedder.embed("What pastimes does enjoy?")
    with Session(db_engine) as session:
        plain = line_terms(session, "vocab-c", QUESTION, shipped)
        expanded = line_terms(session, "vocab-c", QUESTION, shipped, question)
    assert "potteri" not in plain.terms.lexemes
    weights = dict(zip(expanded.terms.lexemes, expanded.terms.weights, strict=True))
    asked = dict(zip(plain.terms.lexemes, plain.terms.weights, strict=True))
    assert {"potteri", "camp"} <= weights.keys()
    assert expanded.terms.filter_lexemes == plain.terms.filter_lexemes  # added words score; asked ones search
    assert weights["potteri"] < asked["melani"]  # an added word weighs a fraction of an asked one
    assert expanded.scale == plain.scale  # a turn holding every asked word still scores the same share


def test_recall_finds_the_turn_that_answers_in_other_words(sessions, db_engine):
    embedder = CountingEmbedder()
    _import(sessions, "vocab-d", embedder)
    vocabulary.fill_all(sessions, embedder)
    shipped = load_memory_config(PROJECT_ROOT / "configs")
    question = "What pastimes do they enjoy?"  # no turn holds "pastimes" or "enjoy"

    def lexical(config: MemoryConfig) -> dict[str, float]:
        with Session(db_engine) as session:
            hits = recall(session, embedder, "vocab-d", question, k=8, now=NOW, config=config, reinforce=False)
        return {hit.external_ids[-1]: hit.signals["lexical"] for hit in hits}

    with_words = lexical(shipped)
    without = lexical(MemoryConfig(recall=replace(shipped.recall, expansion_words=0)))
    assert with_words["D1:2"] > 0 and with_words["D1:6"] > 0  # "Pottery class again.", "Camping with family ..."
    assert with_words["D1:2"] > with_words.get("D1:8", 0.0)  # "You will be great at it.": no pastime near it
    assert all(value == 0.0 for value in without.values())  # no word of the question in any turn


@pytest.mark.parametrize("setting", ["expansion_weight = -0.1", "expansion_words = -1",
                                     "expansion_min_similarity = 1.5"])
def test_out_of_range_expansion_settings_are_refused(tmp_path, setting):
    (tmp_path / "memory.toml").write_text(f"[recall]\n{setting}\n")
    with pytest.raises(SettingsError, match=setting.split()[0]):
        load_memory_config(tmp_path)


def test_no_expansion_without_a_vector_or_with_no_words(sessions, db_engine):
    embedder = CountingEmbedder()
    _import(sessions, "vocab-e", embedder)
    vocabulary.fill_all(sessions, embedder)
    off = replace(RecallConfig(), expansion_words=0)
    with Session(db_engine) as session:
        plain = line_terms(session, "vocab-e", QUESTION, RecallConfig())
        assert line_terms(session, "vocab-e", QUESTION, off, embedder.embed(QUESTION)).terms.lexemes == \
            plain.terms.lexemes



def test_forgetting_a_person_deletes_their_vocabulary(sessions, db_engine):
    from services.memory.forget import forget_user

    embedder = CountingEmbedder()
    _import(sessions, "vocab-f", embedder)
    _import(sessions, "vocab-g", embedder)
    vocabulary.fill_all(sessions, embedder)
    assert _words(db_engine, "vocab-f") and _words(db_engine, "vocab-g")
    report = forget_user(sessions, None, "vocab-f")
    assert report.rows["vocabulary"] == len(_words(db_engine, "vocab-g"))  # the same conversation's words
    assert not _words(db_engine, "vocab-f") and _words(db_engine, "vocab-g")


def test_an_added_word_the_sample_missed_still_counts_on_a_long_history(sessions, db_engine):
    """With more lines than the document-frequency sample holds, an added word the sample missed is not
    counted line by line: it is in the person's vocabulary, so it counts as rare, not as absent."""
    embedder = CountingEmbedder()
    _import(sessions, "vocab-h", embedder)
    vocabulary.fill_all(sessions, embedder)
    sampled = replace(RecallConfig(), length_sample=2)  # 2 of the 8 lines: most words unseen by the sample
    with Session(db_engine) as session:
        terms = line_terms(session, "vocab-h", QUESTION, sampled, embedder.embed("What pastimes does enjoy?"))
    weights = dict(zip(terms.terms.lexemes, terms.terms.weights, strict=True))
    assert {"potteri", "camp"} <= weights.keys() and all(weight > 0 for weight in weights.values())


def test_the_nearest_words_are_exact_even_where_the_planner_would_rather_use_the_approximate_index(db_engine):
    from tests.memory_builders import create_user

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with Session(db_engine) as session:
        create_user(session, user_id="vocab-x")
        session.execute(text(
            "INSERT INTO vocabulary (user_id, word, lexeme, embedding) SELECT 'vocab-x', w, w, CAST(v AS vector) "
            "FROM unnest(CAST(:words AS text[]), CAST(:vectors AS text[])) AS n(w, v)"),
            {"words": [f"w{i:04d}" for i in range(len(vectors))], "vectors": [vector_text(v) for v in vectors]})
        session.execute(text("ANALYZE vocabulary"))  # the planner knows the person's words are most of the table
        # An index scan wherever one can serve, and the HNSW index at a tiny ef_search: it would miss words.
        session.execute(text("SET LOCAL enable_seqscan = off"))
        session.execute(text("SET LOCAL enable_bitmapscan = off"))
        session.execute(text("SELECT set_config('hnsw.ef_search', '10', true), "
                             "set_config('hnsw.iterative_scan', 'relaxed_order', true)"))
        for query in rng.normal(size=(5, 384)):
            params: dict = {"user": "vocab-x"}
            nearest = vocabulary.nearest_sql(params, query, 10, -1.0, 1.0)
            found = session.execute(text(f"WITH asked AS (SELECT NULL AS lexeme WHERE false) {nearest}"),
                                    params).tuples().all()
            cosine = vectors @ (query / np.linalg.norm(query))
            assert {lexeme for lexeme, _ in found} == {f"w{i:04d}" for i in np.argsort(-cosine)[:10]}
