"""Each person's vocabulary vectors kept in the process, to pick the query expansion's candidate words.

The expansion's exact kNN over a person's whole vocabulary (``vocabulary.nearest_sql``) made PostgreSQL compute
a cosine for every word (3,583 at 100k exchanges: ~3 ms of CPU on recall's critical path, after the query
vector is ready). Here one float32 product over the kept matrix finds the nearest words with a margin, and the
statement computes pgvector's own cosines for those few only (a primary-key probe each), ordering and cutting
them as before: the words and weights stay pgvector's exact ones, whatever float32 rounding the product makes.
Those few cosines are also computed here, in double precision from the stored float32 vectors (``Matrix.expansion``),
so that recall can skip the statement (``lineterms.expanded_terms``). pgvector sums float32 products (in an order its
compiler picks), so the two differ by ~1e-7: a weight an expansion word gives a turn's BM25 moves in its seventh
digit, which orders turns differently only at an exact tie (the 200 queries' hits at 100k and LoCoMo were the same
with either; bench/recall_rounds.md, lead).

Versioning: the vocabulary grows by inserts (``vocabulary.fill_batch``, never an update) and shrinks when the
person forgets turns (``vocabulary.prune``) or goes, so the person's word count, read in recall's first statement
(``recall._open``), tells when the kept words are stale; they are then brought up to date (the current words'
names read, the new ones' vectors only, the gone ones' rows dropped), while the model embeds the query. (A
backfill adding exactly as many words as a forget removed between two recalls would hide both for a while: the
kept words are looked up in the table, so a pruned one is never an expansion term, and a new one joins at the
next change.)
Memory is bounded: at most ``MAX_PEOPLE`` people and
``MAX_KEPT_WORDS`` words (the least recently used dropped first), and a person with more than ``MAX_WORDS`` words
keeps the SQL kNN over every word.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import BINARY_RESULTS

log = logging.getLogger(__name__)

MAX_PEOPLE = 16
MAX_WORDS = 20_000  # per person: ~30 MB of float32 vectors (384 each)
MAX_KEPT_WORDS = 60_000  # in all (~90 MB): the least recently used people dropped first
# The float32 product's cosines differ from exact ones by ~1e-6: every word within this of the last one taken is a
# candidate too, so the exact cosines (``Matrix.expansion``'s, or the statement's) decide the order.
MARGIN = 1e-4
# A person's word count, for recall's first statement (``:user``).
SIZE_SQL = "(SELECT count(*) FROM vocabulary WHERE user_id = :user)"
# pgvector's binary form: dimension and an unused int16, then big-endian float32s.
_VECTORS = "SELECT word, lexeme, vector_send(embedding) AS vec FROM vocabulary WHERE user_id = :user"
_WORDS = "SELECT array_agg(word) FROM vocabulary WHERE user_id = :user"  # one array: ~0.6 ms CPU, rows took ~3
_NEW_VECTORS = f"{_VECTORS} AND word = ANY(CAST(:words AS text[]))"
_HEADER_FLOATS = 1  # vector_send's 4 header bytes, in float32 widths


@dataclass(frozen=True)
class Matrix:
    """A person's words, their lexemes, their vectors as stored (float32) and the vectors' lengths, one row each."""

    words: list[str]
    lexemes: list[str]
    vectors: np.ndarray
    lengths: np.ndarray
    listed_at: float = 0.0  # when (time.monotonic()) the statement that listed these words started

    def nearest(self, vector: np.ndarray, count: int) -> list[str] | None:
        """The words that can be among the ``count`` nearest ``vector`` by cosine: the nearest ``count`` and
        every other within ``MARGIN`` of the last of them. None when some cosine is not finite."""
        rows = self.candidates(vector, count)
        return None if rows is None else [self.words[i] for i in rows]

    def expansion(self, vector: np.ndarray, rows: np.ndarray, count: int, min_similarity: float, weight: float,
                  asked: list[str]) -> list[tuple[str, float]] | None:
        """``vocabulary.nearest_sql``'s rows, (lexeme, ``weight`` × the best cosine of its words) for the ``count``
        words nearest ``vector`` (among ``rows``, from ``candidates``) at ``min_similarity`` or more whose lexeme is not
        ``asked``, the cosines in double precision; None where the statement must decide (a tie at the cut, a cosine
        that is not finite)."""
        query = np.asarray(vector, dtype=np.float32).astype(np.float64)
        vectors = self.vectors[rows].astype(np.float64)
        found = 1.0 - np.clip(vectors @ query / np.sqrt((vectors * vectors).sum(axis=1) * (query @ query)), -1.0, 1.0)
        if not np.all(np.isfinite(found)):
            return None
        order = np.argsort(found, kind="stable")
        if len(order) > count and found[order[count - 1]] == found[order[count]]:
            return None  # which of the tied words is cut is the statement's scan order
        skipped, best = set(asked), {}
        for index in order[:count]:
            similarity = 1 - float(found[index])  # the statement's ``1 - distance``, in double
            lexeme = self.lexemes[rows[index]]
            if similarity >= min_similarity and lexeme not in skipped:
                best[lexeme] = max(similarity, best.get(lexeme, similarity))
        return [(lexeme, weight * similarity) for lexeme, similarity in best.items()]

    def candidates(self, vector: np.ndarray, count: int) -> np.ndarray | None:
        """The rows of ``nearest``'s words."""
        norm = float(np.linalg.norm(vector))
        if not self.words or count < 1 or not np.isfinite(norm) or norm == 0.0:
            return None
        if len(self.words) <= count:
            return np.arange(len(self.words))
        # einsum, not ``@``: its own single-threaded loop. OpenBLAS's threads (matrix × vector) spun on recall's
        # two cores against the model's: ~28 ms more process CPU a recall, paired at 100k.
        sims = np.einsum("ij,j->i", self.vectors, np.asarray(vector, dtype=np.float32) / np.float32(norm))
        sims /= self.lengths
        if not np.all(np.isfinite(sims)):
            return None
        floor = float(np.partition(sims, len(sims) - count)[len(sims) - count]) - MARGIN
        return np.flatnonzero(sims >= floor)


def _matrix(words: list[str], lexemes: list[str], blobs: list[bytes]) -> Matrix | None:
    """The unit vectors of ``blobs`` (``vector_send``'s bytes, one per word); None when one has no length (pgvector's
    cosine is then NaN, which sorts after every distance: such a person keeps the SQL kNN)."""
    # All decoded at once (each one's header is one float's width: dropped as the first column), where a frombuffer
    # per word and their stack took ~22 ms of CPU for 3,583 words; the same floats.
    joined = np.frombuffer(b"".join(blobs), dtype=">f4").reshape(len(blobs), -1)
    vectors = joined[:, _HEADER_FLOATS:].astype(np.float32)
    lengths = np.linalg.norm(vectors, axis=1)
    if not np.all(np.isfinite(lengths) & (lengths > 0)):
        return None
    return Matrix(words, lexemes, vectors, lengths)


@dataclass(frozen=True)
class Expansion:
    """The words whose cosines the expansion's statement computes (None: every word), and its rows computed here
    (None: the statement must run)."""

    among: list[str] | None
    rows: list[tuple[str, float]] | None


class Matrices:
    """Kept matrices by (database, person), with the word count each was read at."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], tuple[int, Matrix | None]] = OrderedDict()
        self._lock = threading.Lock()

    def nearest(self, session: Session, user_id: str, size: int | None, vector: np.ndarray,
                count: int) -> list[str] | None:
        """The candidate words for the ``count`` nearest ``vector`` among the person's ``size`` words (their
        current count); None: the SQL kNN decides (size unknown, over ``MAX_WORDS``, or a zero vector)."""
        if not size or size > MAX_WORDS:  # no word: nothing to read (the statement finds none either)
            return None
        matrix = self._get(session, user_id, size)
        return matrix.nearest(vector, count) if matrix is not None else None

    def expansion(self, session: Session, user_id: str, size: int | None, vector: np.ndarray, count: int,
                  min_similarity: float, weight: float, asked: list[str], listed_after: float) -> Expansion:
        """The expansion's words for ``vector`` (``Matrix.expansion``'s arguments): the candidates the statement
        compares, and the rows it would return, computed here when the kept words were listed after ``listed_after``.

        The statement looks the candidates up, so a word gone from the vocabulary is never among its rows; the rows
        made here have no such look-up. A word goes only when the person forgets turns, which makes the next recall
        count its terms afresh (``termcounts``): ``listed_after`` is when those counts were read, and words listed
        before that may include a forgotten one (a backfill adding as many words as a forget removed leaves the count
        that versions them unchanged), so their rows are not made here."""
        if not size or size > MAX_WORDS:
            return Expansion(None, None)
        matrix = self._get(session, user_id, size)
        if matrix is None:
            return Expansion(None, None)
        rows = matrix.candidates(vector, count)
        if rows is None:
            return Expansion(None, None)
        among = [matrix.words[i] for i in rows]
        if matrix.listed_at < listed_after:
            return Expansion(among, None)
        return Expansion(among, matrix.expansion(vector, rows, count, min_similarity, weight, asked))

    def warm(self, session: Session, user_id: str, size: int | None, listed_after: float = 0.0) -> None:
        """Bring the person's kept vectors up to date now if they are stale (their vocabulary changed, or their words
        were listed before ``listed_after``: see ``expansion``), not once the query vector is there: recall calls this
        while the model still embeds."""
        if size and size <= MAX_WORDS:
            self._get(session, user_id, size, listed_after)

    def _get(self, session: Session, user_id: str, size: int, listed_after: float = 0.0) -> Matrix | None:
        key = (_database(session), user_id)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] == size and (kept[1] is None or kept[1].listed_at >= listed_after):
                self._kept.move_to_end(key)
                return kept[1]
        listed_at = time.monotonic()
        if kept is not None and kept[1] is not None:
            words, matrix = self._refreshed(session, user_id, kept[1])
        else:
            words, lexemes, blobs = self._vectors(session, _VECTORS, {"user": user_id})
            matrix = _matrix(words, lexemes, blobs) if words else None
        matrix = replace(matrix, listed_at=listed_at) if matrix is not None else None
        # Read in a later snapshot than ``size``: kept at the count actually read, so a mismatch reads again.
        with self._lock:
            self._kept[key] = (len(words), matrix)
            self._kept.move_to_end(key)
            while len(self._kept) > MAX_PEOPLE or (len(self._kept) > 1 and self._words() > MAX_KEPT_WORDS):
                self._kept.popitem(last=False)
        return matrix if len(words) == size else None

    def _refreshed(self, session: Session, user_id: str, old: Matrix) -> tuple[list[str], Matrix | None]:
        """``old`` brought up to the person's current words: their names read (~3,600 short strings), the vectors of
        the new ones only, the gone ones' rows dropped. A vocabulary grows by a few words at a time (the backfill)
        and a full read sent every vector again (~5.5 MB at 3,583 words, ~35 ms of the server's time)."""
        words = list(session.scalar(text(_WORDS).execution_options(**{BINARY_RESULTS: True}), {"user": user_id}) or [])
        present = set(words)
        new = sorted(present.difference(old.words))
        added, lexemes, blobs = (self._vectors(session, _NEW_VECTORS, {"user": user_id, "words": new}) if new
                                 else ([], [], []))
        fresh = _matrix(added, lexemes, blobs) if added else None
        if added and fresh is None:
            return words, None  # a new word without a length: the SQL kNN, as for a full read
        if not added and len(present) == len(old.words) and present.issuperset(old.words):
            return words, old  # the same words (listed again after a forget might have removed one)
        parts = [old]
        if not present.issuperset(old.words):  # some words gone (a forget): their rows dropped
            kept = np.fromiter((word in present for word in old.words), dtype=bool, count=len(old.words))
            parts = [Matrix([w for w, stays in zip(old.words, kept, strict=True) if stays],
                            [x for x, stays in zip(old.lexemes, kept, strict=True) if stays],
                            old.vectors[kept], old.lengths[kept])]
        parts += [fresh] if fresh is not None else []
        names = [word for part in parts for word in part.words]
        if not names:
            return names, None
        # Words only added (the backfill): one copy of the kept rows, not two.
        return names, Matrix(names, [lexeme for part in parts for lexeme in part.lexemes],
                             np.concatenate([part.vectors for part in parts]),
                             np.concatenate([part.lengths for part in parts]))

    @staticmethod
    def _vectors(session: Session, sql: str, params: dict[str, object]) -> tuple[list[str], list[str], list[bytes]]:
        """The words and their vectors' bytes, in binary (as text, bytea comes hex-encoded: twice the bytes, decoded
        here; at 3,583 words read and built in ~17 ms of this process's CPU where rows of text took ~65)."""
        # Each row let go once read: 3,583 rows held at once made the collector run ~5 times.
        words, lexemes, blobs = [], [], []
        for word, lexeme, blob in session.execute(text(sql).execution_options(**{BINARY_RESULTS: True}), params):
            words.append(word)
            lexemes.append(lexeme)
            blobs.append(blob)
        return words, lexemes, blobs

    def _words(self) -> int:
        return sum(count for count, _ in self._kept.values())

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def _database(session: Session) -> str:
    return str(session.get_bind().engine.url)


MATRICES = Matrices()
