"""Speaker-aware recall: a question that names a speaker is matched against that speaker's own turns.

In an imported conversation between named people, "What activities does Melanie partake in?" is
answered by Melanie's own turns ("I just signed up for a pottery class"), spread over many
sessions, sharing no word with the question but her name. Two things follow:

- the name dominates a sentence embedding of the question, so the question's vector is the mean
  of its own and that of the question without the name (the person is found by the name's BM25
  and by the speaker arm; the vector should look for *what* is asked);
- the named speaker's turns, each with its own vector (migration 0009), are ranked by similarity
  to the question without the name: the best of them join the candidates (the speaker arm), and
  each candidate spoken by that person gets that similarity as one more relevance signal.

Only turns of a named speaker carry a vector; a chat's "user" and "assistant" are roles, not names.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from services.embeddings import Embedder, normalise
from services.memory.config import RecallConfig

ROLES = frozenset({"user", "assistant"})
_WORD = re.compile(r"[^\W\d_][\w'\-]*")


@dataclass(frozen=True)
class NamedSpeaker:
    """The speaker a query names (lower case, as matched) and the query's vector without the name."""

    name: str
    vector: np.ndarray


def is_named(speaker: str) -> bool:
    """A person's name rather than a chat role."""
    return speaker.strip().lower() not in ROLES


def line_text(speaker: str, body: str) -> str:
    """What a named speaker's turn is embedded as: "Name: text", as recall renders it."""
    return f"{speaker}: {body}"


def embed_records(embedder: Embedder, records: Sequence[Any], exchange_text: Callable[[Any], str],
                  pool: Executor | None = None) -> dict[str, tuple[np.ndarray, dict[int, np.ndarray]]]:
    """Each record's exchange vector and its named speakers' line vectors (by position), by record key.

    A record whose every line is a named speaker's is embedded line by line and its exchange vector is
    the mean of its lines' vectors: the same embedding work as its joined text and as good for recall
    (bench/recall/locomo.py). Any other record is embedded as its joined text; its lines get no vector.
    """
    by_lines = [r for r in records if r.lines and all(is_named(line.speaker) for line in r.lines)]
    keyed = {r.key for r in by_lines}
    whole = [r for r in records if r.key not in keyed]
    vectors = embed_in_parallel(embedder, [exchange_text(r) for r in whole]
                                + [line_text(line.speaker, line.text) for r in by_lines for line in r.lines], pool)
    found = {r.key: (vector, {}) for r, vector in zip(whole, vectors[:len(whole)], strict=True)}
    start = len(whole)
    for record in by_lines:
        lines = vectors[start : start + len(record.lines)]
        start += len(record.lines)
        found[record.key] = (normalise(lines.mean(axis=0)), dict(enumerate(lines)))
    return found


def name_words(query: str) -> list[str]:
    """The query's words that could name a speaker (lower case, possessive dropped, roles left out)."""
    return sorted({word.lower().removesuffix("'s") for word in _WORD.findall(query)} - ROLES)


# The words (``:words``) that name a speaker of this user's conversations, as a SQL array expression: recall
# sends it inside its opening statement.
SPEAKER_WORDS_SQL = ("ARRAY(SELECT w FROM unnest(CAST(:words AS text[])) AS w WHERE EXISTS (SELECT 1 "
                     "FROM exchange_lines WHERE user_id = :user AND lower(speaker) = w))")


def the_one(found: Sequence[str]) -> str | None:
    """The speaker named, when the query names exactly one."""
    return found[0] if len(found) == 1 else None


class SpeakerGuesses:
    """Which words named a speaker of a user's conversations when recall last asked, kept per process.

    Recall starts embedding its query before its opening statement says whether the query names a
    speaker (a named query embeds the query and the query without the name in one batch, an unnamed
    one only the query): this guess picks the texts. It is never the answer: when the statement
    disagrees (a speaker new since, or a word never asked), recall embeds again what the statement says.
    """

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self._named: OrderedDict[tuple[str, str], bool] = OrderedDict()
        self._lock = threading.Lock()  # recalls of one process may run on several threads

    def guess(self, user_id: str, words: Sequence[str]) -> str | None:
        """The one speaker these words name as far as known (a word never asked counts as no name)."""
        with self._lock:
            return the_one([word for word in words if self._named.get((user_id, word))])

    def learn(self, user_id: str, words: Sequence[str], named: Sequence[str]) -> None:
        """What recall's opening statement found: of ``words``, those in ``named`` name a speaker."""
        with self._lock:
            for word in words:
                self._named[(user_id, word)] = word in named
                self._named.move_to_end((user_id, word))
            while len(self._named) > self.size:
                self._named.popitem(last=False)


GUESSES = SpeakerGuesses()


def without_name(query: str, name: str) -> str:
    """The query with the name (and its possessive) taken out."""
    stripped = re.sub(rf"\b{re.escape(name)}(?:'s|’s)?\b", " ", query, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", stripped).strip() or query


def query_vectors(embedder: Embedder, query: str, query_embedding: np.ndarray | None,
                  name: str | None) -> tuple[np.ndarray, NamedSpeaker | None]:
    """The query vector to search with, and the named speaker when the query names one (``name``, from
    recall's opening statement).

    With a name, the query and the query without it are embedded in one batch (cheaper than two
    calls) and the search vector is their normalised mean.
    """
    if name is None:
        return (query_embedding if query_embedding is not None else embedder.embed(query)), None
    if query_embedding is None:
        query_embedding, nameless = embedder.embed_many([query, without_name(query, name)])
    else:
        nameless = embedder.embed(without_name(query, name))
    return _blend(query_embedding, nameless), NamedSpeaker(name, nameless)


def _blend(query_embedding: np.ndarray, nameless: np.ndarray) -> np.ndarray:
    """The search vector of a query naming a speaker: the normalised mean of its vector and its nameless one."""
    return normalise(np.asarray(query_embedding, dtype=np.float32) + nameless)


def nameless_ahead(pool: Executor, embedder: Embedder, query: str, name: str,
                   own: Future[tuple[np.ndarray, NamedSpeaker | None]] | None,
                   query_embedding: np.ndarray | None) -> Future[tuple[np.ndarray, NamedSpeaker | None]]:
    """``query_vectors`` for ``name``, when the query turned out to name that speaker after its own vector alone was
    started (``own``, embedding it for no name) or given (``query_embedding``): the query without the name is embedded
    now on another thread, beside the query's own embedding, and their blend is the result.

    (Before, recall waited for the query's own vector, then embedded the query and the query without the name as a
    batch: two embeddings one after the other, on every first question naming someone a process had not heard of.)
    ``own`` must have gone into ``pool`` before this task: a pool takes its tasks in order, so it runs (or ran) when
    this one waits for it."""
    def blended() -> tuple[np.ndarray, NamedSpeaker | None]:
        nameless = embedder.embed(without_name(query, name))
        vector = own.result()[0] if own is not None else query_embedding
        return _blend(vector, nameless), NamedSpeaker(name, nameless)

    return pool.submit(blended)


def searches_turns(speaker: NamedSpeaker | None, cfg: RecallConfig) -> bool:
    """Whether recall searches the named speaker's own turns (``speaker_lines_sql``): one rule for the arm inside
    window_rows' statement (``spans.gather``) and beside the exchange arms (``sidearms``), which must agree."""
    return speaker is not None and cfg.speaker_weight > 0 and cfg.speaker_candidates > 0


def speaker_lines_sql() -> str:
    """The speaker arm's statement: ids of the named speaker's turns most similar to the query without the name,
    best first (the speaker's name in ``:spk_name``, the vector in ``:spk_vec``)."""
    return ("SELECT id FROM exchange_lines WHERE user_id = :user AND lower(speaker) = :spk_name "
            "AND embedding IS NOT NULL ORDER BY embedding <=> :spk_vec, id LIMIT :spk_limit")


def embed_in_parallel(embedder: Embedder, texts: list[str], pool: Executor | None, batch_size: int = 32) -> np.ndarray:
    """Embed many texts (a bulk import): batches of similar length, spread over ``pool``'s threads.

    Each backend runs one thread per call and releases the GIL while the model runs, so two
    threads embed about twice as fast as one on two idle cores; a live turn embeds one text on one
    thread and never comes here. Rows come back in the order of ``texts``.
    """
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    if not texts:
        return vectors
    order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

    def run(batch: list[int]) -> np.ndarray:
        return embedder.embed_many([texts[index] for index in batch], batch_size=len(batch))

    for batch, found in zip(batches, pool.map(run, batches) if pool is not None else map(run, batches), strict=True):
        vectors[batch] = found
    return vectors
