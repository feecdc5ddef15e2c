"""Recall embeds its own query on a worker thread while its first statements run: whichever way the
vector arrives (given, embedded ahead for the right speaker, ahead for a wrong guess and again), and
whether the BM25 arm runs inside the turns' statement or on its own meanwhile, the hits are the same."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from services.db import make_sessionmaker
from services.memory import lineterms, sidearms, speakers, vocabmatrix, vocabulary
from services.memory.config import RecallConfig
from services.memory.importer import pair_exchanges, parse_lines, store_records
from services.memory.recall import recall
from services.memory.speakers import SpeakerGuesses
from services.memory.vectors import fill_all
from tests.test_memory_speakers import NOW, QUESTION, PastimeEmbedder, _import

pytestmark = pytest.mark.integration

LEXICAL_APART = "SELECT t.id FROM (((SELECT id, search FROM (SELECT id, search FROM exchange_lines"


class SlowEmbedder(PastimeEmbedder):
    """Takes as long as a real model on a busy machine, so recall's statements run while it embeds."""

    def _encode(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.05)
        return super()._encode(texts)


def _hits(session: Session, embedder, user: str, query: str, vector: np.ndarray | None = None,  # type: ignore[no-untyped-def]
          config: RecallConfig | None = None):
    return [hit.to_dict() for hit in recall(session, embedder, user, query, k=6, now=NOW, reinforce=False,
                                            query_embedding=vector, config=config)]


@pytest.mark.parametrize("expansion_words", [0, RecallConfig().expansion_words])
@pytest.mark.parametrize("query", [QUESTION, "What did they say about the dinosaur hall?"])
def test_recall_embedding_its_own_query_returns_the_hits_it_returns_given_the_vector(db_engine, query,
                                                                                      expansion_words, monkeypatch):
    # The exchange arms stay inline here (on a second connection the BM25 arm also runs apart while they run:
    # test_recall_sidearms), so which statement ran while the model ran tells the overlap apart.
    monkeypatch.setattr(sidearms, "side_engine", lambda session, own_only: None)
    sessions = make_sessionmaker(db_engine)
    _import(sessions, f"overlap-a{expansion_words}")
    user, config = f"overlap-a{expansion_words}", RecallConfig(expansion_words=expansion_words)
    embedder = SlowEmbedder(cache_size=0)
    statements: list[str] = []
    with Session(db_engine) as session:
        given = _hits(session, embedder, user, query, embedder.embed(query), config)  # the arm inside window_rows
        event.listen(session.get_bind(), "before_cursor_execute", lambda *args: statements.append(args[2]))
        first = _hits(session, embedder, user, query, config=config)  # no guess yet for a named query
        # Without the vocabulary's expansion (which needs the vector first), the BM25 arm ran while the model ran.
        assert any(s.startswith(LEXICAL_APART) for s in statements) == (expansion_words == 0)
        again = _hits(session, embedder, user, query, config=config)  # the guess, learned from the first
    assert given and first == given and again == given


class GatedEmbedder(PastimeEmbedder):
    """Embeds once its gate opens (or after 10 s), noting whether it opened: whether recall ran a statement while
    its model ran."""

    def __init__(self) -> None:
        super().__init__(cache_size=0)
        self.gate = threading.Event()
        self.opened: list[bool] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.opened.append(self.gate.wait(10))
        return super()._encode(texts)


def test_with_the_vocabulary_expansion_the_query_terms_are_counted_while_the_model_embeds(db_engine, monkeypatch):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "overlap-d")
    vocabulary.fill_all(sessions, PastimeEmbedder())
    config = RecallConfig()  # as shipped: the expansion on
    embedder = GatedEmbedder()
    vector = PastimeEmbedder().embed(QUESTION)
    with Session(db_engine) as session:
        plain = lineterms.line_terms(session, "overlap-d", QUESTION, config)
        expanded = lineterms.line_terms(session, "overlap-d", QUESTION, config, vector)
        assert config.expands and set(expanded.terms.lexemes) > set(plain.terms.lexemes)  # words were added
        # In two steps (the asked words' counts first, the expansion once the vector is there): the same terms.
        asked = lineterms.asked_terms(session, "overlap-d", QUESTION, config)
        assert lineterms.expanded_terms(session, "overlap-d", asked, config, vector) == expanded
        assert lineterms.expanded_terms(session, "overlap-d", asked, config) == plain
        given = _hits(session, PastimeEmbedder(cache_size=0), "overlap-d", QUESTION, vector, config)
        order: list[tuple[str, bool]] = []

        def seen(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
            if "tsvector_to_array(to_tsvector" in statement:  # the asked terms' counts: no vector needed
                embedder.gate.set()
            order.append(("vocabulary" if "FROM vocabulary" in statement else "other", embedder.gate.is_set()))

        event.listen(session.get_bind(), "before_cursor_execute", seen)
        expand = vocabmatrix.Matrix.expansion
        expanded_with_gate: list[bool] = []

        def expansion(*args, **kwargs):  # type: ignore[no-untyped-def]
            expanded_with_gate.append(embedder.gate.is_set())
            return expand(*args, **kwargs)

        monkeypatch.setattr(vocabmatrix.Matrix, "expansion", expansion)
        own = _hits(session, embedder, "overlap-d", QUESTION, config=config)
    # The model waited for the asked terms' statement, which therefore ran before the vector was there; the person's
    # kept vectors were read meanwhile; the expansion over them (which needs the vector) was made after, with no
    # statement; the hits are those given the vector.
    assert embedder.opened and embedder.opened[0]
    assert ("vocabulary", False) in order and ("vocabulary", True) not in order
    assert expanded_with_gate == [True]
    assert given and own == given


def test_a_wrong_speaker_guess_is_embedded_again_for_the_speaker_the_database_names(db_engine, monkeypatch):
    sessions = make_sessionmaker(db_engine)
    _import(sessions, "overlap-b")
    embedder = SlowEmbedder(cache_size=0)
    with Session(db_engine) as session:
        given = _hits(session, embedder, "overlap-b", QUESTION, embedder.embed(QUESTION))
        guesses = SpeakerGuesses()
        guesses.learn("overlap-b", ["melanie", "pastimes"], ["pastimes"])  # a stale guess: the wrong word
        assert guesses.guess("overlap-b", ["melanie", "pastimes"]) == "pastimes"
        monkeypatch.setattr(speakers, "GUESSES", guesses)
        wrong = _hits(session, embedder, "overlap-b", QUESTION)
        assert guesses.guess("overlap-b", ["melanie", "pastimes"]) == "melanie"  # corrected by what was found
    assert given and wrong == given


def test_speaker_guesses_are_per_user_and_bounded():
    guesses = SpeakerGuesses(size=3)
    guesses.learn("ann", ["melanie", "pottery"], ["melanie"])
    assert guesses.guess("ann", ["melanie", "pottery"]) == "melanie"
    assert guesses.guess("bob", ["melanie"]) is None  # another user's speakers are not hers
    guesses.learn("ann", ["caroline"], ["caroline"])
    assert guesses.guess("ann", ["melanie", "caroline"]) is None  # two names: no one speaker
    guesses.learn("bob", ["zed"], [])  # a fourth word: the oldest ("melanie") is forgotten
    assert guesses.guess("ann", ["melanie"]) is None and guesses.guess("ann", ["caroline"]) == "caroline"


def test_full_text_indexes_keep_short_pending_lists_and_vectors_stay_in_their_rows(db_engine):
    sessions = make_sessionmaker(db_engine)
    # Turns long enough that a row with its 1.5 kB vector passes the 2 kB TOAST threshold (the default
    # storage then moves the vector out of its row).
    story = "the pottery class moved to the old mill by the river, and the kiln there is huge. " * 8
    lines, _, _ = parse_lines([json.dumps({"session": "s1", "speaker": speaker, "text": f"{speaker}: {story}",
                                           "timestamp": f"2025-05-0{day}T10:00:00Z", "external_id": f"L{day}"})
                               for day, speaker in enumerate(["Caroline", "Melanie", "Caroline", "Melanie"], 1)])
    store_records(sessions, PastimeEmbedder(), "overlap-c", pair_exchanges(lines))
    fill_all(sessions, PastimeEmbedder())
    with Session(db_engine) as session:
        options = dict(session.execute(text(
            "SELECT relname, reloptions FROM pg_class WHERE relname IN ('ix_exchange_lines_search', "
            "'ix_facts_search', 'ix_episodes_search')")).tuples().all())
        assert options and all(opts == ["gin_pending_list_limit=256"] for opts in options.values()), options
        # Every vector the import and its backfill stored is in its row: a similarity reads no TOAST index.
        outside = session.execute(text(
            "SELECT count(*) FILTER (WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL), count(embedding) "
            "FROM exchanges WHERE user_id = 'overlap-c'")).one()
        lines = session.execute(text(
            "SELECT count(*) FILTER (WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL), count(embedding) "
            "FROM exchange_lines WHERE user_id = 'overlap-c'")).one()
    assert outside[0] == 0 and outside[1] > 0 and lines[0] == 0 and lines[1] > 0
