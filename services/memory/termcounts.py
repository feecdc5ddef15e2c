"""The counts behind a query's BM25 terms, kept per person while their turns stay the same.

A recall counts each of its words in a sample of the person's turns (their first ``length_sample``), a word
the sample barely holds exactly over all their turns, and reads the sample's size and average length
(``services.memory.lineterms``): the first statement after the model embeds the query waits for it. These
counts change only when turns are added or removed, and every statement that adds or removes turns updates
the person's row of ``exchange_line_counts`` (migration 0010's triggers), so the row's line count and
``xmin`` version the counts. A terms statement compares the version it reads with the one the kept counts
were read at (in the same statement, so from the same snapshot) and counts only the words not kept; the
other words' counts, the sample's size and length come from here. A turn's row rewritten in place (its text
edited, its speaker vector filled: the sample, the first rows in the table's order, may then hold other turns)
counts in the row's ``rewrites`` (migration 0017), which versions it too; a table rewritten whole (VACUUM FULL,
CLUSTER) versions nothing: kept counts live at most ``TTL_S`` seconds (60 before 0017, when a person writing
less than once a minute recounted at every recall).

A chatting person adds turns between two recalls, so the version moves at nearly every recall. When all the
person did since the counts were read is add at most ``MAX_GROWTH`` turns (their line count grew by exactly the
number of their lines after the highest line id of that read, ``top``: a removed or late-committed line breaks the
equality), the counts are brought up to date instead of read again (``Kept.grown``): the line count is the current
one, each exactly counted word gains the new turns holding it (capped as counted), and the sample is the one a
recount would read (their first ``length_sample`` turns by id, a full sample's last below ``top``), so its
counts, size and length stand: the same terms as a recount.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy.orm import Session

from services.memory.config import RecallConfig

TTL_S = 600.0
MAX_PEOPLE = 256  # per process, the least recently used dropped first
MAX_WORDS = 2000  # per person: each statement sends the kept words (two text arrays), so they stay few
MAX_GROWTH = 200  # turns added since the counts were read that are counted in; more: the counts are read again

# The person's counts row as a version (NULL without turns): lines, and the transaction that last wrote it.
VERSION_SQL = "(SELECT lines::text || '/' || xmin::text FROM exchange_line_counts WHERE user_id = :user)"


class TermRow(NamedTuple):
    """One lexeme's counts (``lexeme`` None on the row of a query without any) and the sample's statistics."""

    lexeme: str | None
    mult: float
    added: bool
    sample_df: int | None
    n: int | None
    avg_len: Any
    lines: int | None
    exact_df: int | None


@dataclass
class Kept:
    """One person's counts at ``version``: the sample's size and length, each lexeme's sample count, and each
    asked lexeme's exact count (None: its sample count stands)."""

    version: str
    n: int
    avg_len: Any
    sampled: dict[str, int] = field(default_factory=dict)
    exact: dict[str, int | None] = field(default_factory=dict)
    expires: float = 0.0
    lines: int = 0  # the person's line count at ``version``
    top: int = 0  # the highest line id (anyone's) at ``version``: the person's later lines are the ones added
    # The kept lexemes quoted as array elements, each once (sampled, asked), and as array literals when sent.
    _elements: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    _literals: tuple[str, str] | None = None
    # Every lexeme of the sample with the number of its lines holding it (a lexeme not here: none), read at this
    # version when recall had time for it (``lineterms.count_sample``); None: not read. The sample stays while these
    # counts are brought up to date (``grown``), so they do too.
    sample_counts: dict[str, int] | None = None
    read_at: float = 0.0  # when (time.monotonic()) the counts were read afresh: after any turn forgotten before

    def params(self) -> dict[str, Any]:
        """The kept counts as a terms statement's parameters: the arrays sent as text (the driver adapting a list
        of a thousand strings element by element cost ~0.5 ms a statement)."""
        if self._literals is None:
            self._literals = ("{" + ",".join(self._elements[0]) + "}", "{" + ",".join(self._elements[1]) + "}")
        return {"known_version": self.version, "known_n": self.n, "known_sampled": self._literals[0],
                "known_asked": self._literals[1], "known_lines": self.lines, "known_top": self.top}

    def grown(self, version: str, lines: int, top: int, added: list[str] | None, cap: int) -> Kept:
        """These counts brought up to ``version``, at which the person has ``lines`` lines and the highest line id
        is ``top``: ``added`` lists each lexeme once for every line added since that holds it. A copy: a
        statement sent with these counts may still be reading them."""
        holding = Counter(added or ())
        exact = {lexeme: count if count is None or count >= cap else min(cap, count + holding[lexeme])
                 for lexeme, count in self.exact.items()}
        return Kept(version, self.n, self.avg_len, dict(self.sampled), exact, self.expires, lines, top,
                    (list(self._elements[0]), list(self._elements[1])), self._literals,
                    self.sample_counts, self.read_at)

    def sample_count(self, lexeme: str) -> int | None:
        """How many of the sample's lines hold ``lexeme``, when kept (None: unknown here)."""
        count = self.sampled.get(lexeme)
        if count is None and self.sample_counts is not None:
            return self.sample_counts.get(lexeme, 0)
        return count

    def learn(self, rows: list[TermRow]) -> None:
        """Keep the counts of ``rows`` (read at this version), up to MAX_WORDS lexemes."""
        for row in rows:
            if row.lexeme is None or row.sample_df is None or len(self.sampled) >= MAX_WORDS:
                continue
            # A lexeme joins the elements sent after its count is in: a statement told it is known finds it here.
            fresh = row.lexeme not in self.sampled
            self.sampled[row.lexeme] = row.sample_df
            if fresh:
                self._elements[0].append(_quoted(row.lexeme))
                self._literals = None
            if not row.added:
                fresh = row.lexeme not in self.exact
                self.exact[row.lexeme] = row.exact_df
                if fresh:
                    self._elements[1].append(_quoted(row.lexeme))
                    self._literals = None


def _quoted(lexeme: str) -> str:
    """A lexeme as an element of a PostgreSQL array literal."""
    return '"' + lexeme.replace("\\", "\\\\").replace('"', '\\"') + '"'


NOTHING_KEPT = {"known_version": None, "known_n": 0, "known_sampled": "{}", "known_asked": "{}", "known_lines": 0,
                "known_top": 0}


class TermCounts:
    """Kept counts by (database, person, sample size, df cap)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str, int, int], Kept] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session: Session, user_id: str, config: RecallConfig) -> Kept | None:
        key = _key(session, user_id, config)
        with self._lock:
            kept = self._kept.get(key)
            if kept is None or kept.expires < time.monotonic():
                return None
            self._kept.move_to_end(key)
            return kept

    def put(self, session: Session, user_id: str, config: RecallConfig, version: str | None,
            rows: list[TermRow], top: int | None = None) -> Kept | None:
        """Keep the counts a statement read afresh at ``version`` (None: the person has no turns; nothing kept),
        when the highest line id was ``top``; returns them."""
        key = _key(session, user_id, config)
        with self._lock:
            self._kept.pop(key, None)
            if version is None or not rows:
                return None
            kept = Kept(version, int(rows[0].n or 0), rows[0].avg_len, expires=time.monotonic() + TTL_S,
                        lines=int(rows[0].lines or 0), top=int(top or 0), read_at=time.monotonic())
            kept.learn(rows)
            self._kept[key] = kept
            while len(self._kept) > MAX_PEOPLE:
                self._kept.popitem(last=False)
        return kept

    def advance(self, session: Session, user_id: str, config: RecallConfig, kept: Kept, version: str, lines: int,
                top: int, added: list[str] | None) -> Kept:
        """``kept`` brought up to ``version`` (``Kept.grown``), kept in its place unless another recall replaced
        it meanwhile; the counts to read this statement's rows with."""
        newer = kept.grown(version, lines, top, added, config.df_cap)
        key = _key(session, user_id, config)
        with self._lock:
            if self._kept.get(key) is kept:
                self._kept[key] = newer
        return newer

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def _key(session: Session, user_id: str, config: RecallConfig) -> tuple[str, str, int, int]:
    return str(session.get_bind().engine.url), user_id, config.length_sample, config.df_cap


COUNTS = TermCounts()
