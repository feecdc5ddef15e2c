"""Each person's vocabulary by embedding: the question expanded with the nearest words they use.

A question often shares no word with the turn that answers it: "What martial arts has John done?"
← "I'm doing kickboxing"; "What are Joanna's hobbies?" ← "Besides writing, I also enjoy reading".
Recall therefore adds to the question's BM25 terms the words of the person's own turns whose
MiniLM vector is nearest to the question's (without a name it names: the name would pull the
speaker's name and its neighbours), each weighted ``expansion_weight`` × its cosine × its IDF,
and not counted in the score a turn holding every asked word reaches; they re-rank the candidates
the other arms bring and search nothing themselves. Measured on LoCoMo
(bench/recall/locomo.py, rounds four and five): +0.005 within 10 turns, +0.003 within 20, multi-hop
+0.027.

The vocabulary (migration 0013) holds each distinct word of a person's turns (letters, three or
more, one full-text lexeme: no stop word), its lexeme and its vector. The vector backfill job
fills it (``fill_all``) for the turns stored since the single ``vocabulary_mark`` row's
``line_id`` (every turn up to it has its words in), whichever way they came (import or chat), so a
word is embedded once per person, in the background; the ``vector_backfill`` periodic service
queues the job while turns wait (``pending``). Until then recall simply expands with what is in.
The mark advances under ``FOR UPDATE SKIP LOCKED``: one worker fills at a time, a crash rolls the
batch back. A turn committed after a later turn's words went in (a long transaction) is skipped:
its words come in with any later turn that uses them.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sqlalchemy import Connection, text
from sqlalchemy.orm import Session, sessionmaker

from services.db import vector_text
from services.embeddings import Embedder

LINES_PER_BATCH = 2000  # turns read per transaction (a few hundred new words at most once a person is known)
# The words of a batch's turns, per person, that the vocabulary lacks: lower case, letters (inner ' and -
# kept), three or more, and one full-text lexeme (a stop word has none).
# The words of a turn ``l`` as the vocabulary takes them, as rows ``m`` (``lower(m[1])``): one pattern for the words
# added, the words a forgotten turn said and the words remaining turns still say.
_LINE_WORDS = "CROSS JOIN LATERAL regexp_matches(l.text, '([A-Za-z][A-Za-z''-]*[A-Za-z])', 'g') AS m"
_NEW_WORDS = f"""
WITH found AS (SELECT DISTINCT l.user_id, lower(m[1]) AS word FROM exchange_lines l
               {_LINE_WORDS}
               WHERE l.id > :mark AND l.id <= :top),
     lexed AS (SELECT user_id, word, tsvector_to_array(to_tsvector('english', word)) AS lexemes FROM found
               WHERE length(word) > 2)
SELECT x.user_id, x.word, x.lexemes[1] AS lexeme FROM lexed x
WHERE cardinality(x.lexemes) = 1
  AND NOT EXISTS (SELECT 1 FROM vocabulary v WHERE v.user_id = x.user_id AND v.word = x.word)
ORDER BY x.user_id, x.word
"""


_WORDS_OF_EXCHANGES = f"""
SELECT DISTINCT lower(m[1]) AS word FROM exchange_lines l {_LINE_WORDS}
WHERE l.user_id = :user AND l.exchange_id = ANY(:ids)
"""
# Of ``:words``, the person's vocabulary rows no remaining turn of theirs says (the turns holding the word's
# lexeme found by the full-text index, then their words compared as the vocabulary took them).
_PRUNE = f"""
DELETE FROM vocabulary v WHERE v.user_id = :user AND v.word = ANY(CAST(:words AS text[]))
AND NOT EXISTS (SELECT 1 FROM exchange_lines l {_LINE_WORDS}
                WHERE l.user_id = :user AND l.search @@ CAST(quote_literal(v.lexeme) AS tsquery)
                  AND lower(m[1]) = v.word)
"""


def words_of_exchanges(session: Session, user_id: str, exchange_ids: list[int]) -> list[str]:
    """The words the given exchanges' turns say, as the vocabulary holds them: read before they are deleted."""
    if not exchange_ids:
        return []
    return list(session.scalars(text(_WORDS_OF_EXCHANGES), {"user": user_id, "ids": exchange_ids}))


def prune(session: Session, user_id: str, words: list[str]) -> int:
    """Remove from the person's vocabulary those of ``words`` (a forgotten turn's) that no remaining turn of theirs
    says: forgetting leaves no word of what was forgotten behind, and a word still said elsewhere stays.

    The vocabulary then shrinks, and the word count that versions recall's kept vectors (``vocabmatrix``) drops with
    it; only a backfill adding exactly as many words between two recalls would hide the change, and the kept words
    are looked up in this table, so a pruned word can never come back as an expansion term."""
    if not words:
        return 0
    return int(session.execute(text(_PRUNE), {"user": user_id, "words": words}).rowcount or 0)


def pending(session: Session | Connection) -> bool:
    """Whether some turn's words are not in the vocabulary yet (a primary-key probe)."""
    return bool(session.scalar(text(
        "SELECT EXISTS (SELECT 1 FROM exchange_lines WHERE id > "
        "coalesce((SELECT line_id FROM vocabulary_mark WHERE id = 1), 0))")))


def fill_batch(sessions: sessionmaker[Session], embedder: Embedder, lines: int = LINES_PER_BATCH) -> tuple[int, int]:
    """Add the new words of the next ``lines`` turns; returns (turns read, words added). (0, 0): none left,
    or another worker is filling."""
    with sessions.begin() as session:
        # The row migration 0013 adds, again if it was emptied (a truncated database starts its turns at 1).
        session.execute(text("INSERT INTO vocabulary_mark (id, line_id) VALUES (1, 0) ON CONFLICT DO NOTHING"))
        mark = session.scalar(text("SELECT line_id FROM vocabulary_mark WHERE id = 1 FOR UPDATE SKIP LOCKED"))
        if mark is None:
            return 0, 0
        span = session.execute(text(
            "SELECT count(*) AS n, max(id) AS top FROM (SELECT id FROM exchange_lines WHERE id > :mark "
            "ORDER BY id LIMIT :lines) s"), {"mark": mark, "lines": lines}).one()
        if not span.n:
            return 0, 0
        words = session.execute(text(_NEW_WORDS), {"mark": mark, "top": span.top}).all()
        if words:
            vectors = embedder.embed_many([row.word for row in words])
            session.execute(text(
                "INSERT INTO vocabulary (user_id, word, lexeme, embedding) SELECT u, w, x, CAST(v AS vector) "
                "FROM unnest(CAST(:users AS text[]), CAST(:words AS text[]), CAST(:lexemes AS text[]), "
                "CAST(:vectors AS text[])) AS n(u, w, x, v) ON CONFLICT DO NOTHING"),
                {"users": [row.user_id for row in words], "words": [row.word for row in words],
                 "lexemes": [row.lexeme for row in words], "vectors": [vector_text(v) for v in vectors]})
        session.execute(text("UPDATE vocabulary_mark SET line_id = :top WHERE id = 1"), {"top": span.top})
    return int(span.n), len(words)


def fill_all(sessions: sessionmaker[Session], embedder: Embedder, *, budget_s: float | None = None,
             lines: int = LINES_PER_BATCH) -> int:
    """Run batches of ``lines`` turns until every turn's words are in (or, after the first, ``budget_s`` has
    passed); returns words added."""
    started, added = time.monotonic(), 0
    while True:
        read, words = fill_batch(sessions, embedder, lines)
        added += words
        if not read or (budget_s is not None and time.monotonic() - started >= budget_s):
            return added


def nearest_sql(params: dict[str, Any], vector: np.ndarray, words: int, min_similarity: float,
                weight: float, among: list[str] | None = None) -> str:
    """A SELECT of (lexeme, multiplier) for the person's words nearest ``vector`` (``:user``; the asked
    lexemes in a CTE named ``asked`` are left out): ``weight`` × the best cosine of the lexeme's words,
    for at most ``words`` words at cosine ``min_similarity`` or more. Its values go into ``params``.
    ``among``: words holding every one of the nearest (``vocabmatrix``): only theirs are compared."""
    params.update(x_vec=vector_text(vector), x_words=words, x_min=min_similarity, x_weight=weight)
    scope = ""
    if among is not None:
        # The same cosines, order and cut over a few primary-key probes instead of every word.
        params["x_among"] = among
        scope = "AND word = ANY(CAST(:x_among AS text[])) "
    # Exact, whatever the vocabulary's size: ordered by a column of a subquery the planner may not flatten
    # (OFFSET 0), which no index can serve. The HNSW index at recall's ef_search (100) misses real words among
    # the nearest (14 of 200 queries' ten differ at 100k); it was only unused while the planner priced the
    # exact scan lower, and a growing vocabulary would have flipped the plan, and the expansions, silently.
    return ("SELECT n.lexeme, :x_weight * max(n.sim) FROM (SELECT lexeme, 1 - distance AS sim FROM "
            "(SELECT lexeme, embedding <=> CAST(:x_vec AS vector) AS distance FROM vocabulary WHERE user_id = :user "
            f"{scope}OFFSET 0) v ORDER BY distance LIMIT :x_words) n "
            "WHERE n.sim >= :x_min AND n.lexeme NOT IN (SELECT lexeme FROM asked) GROUP BY n.lexeme")

