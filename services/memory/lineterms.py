"""The query's BM25 terms: its lexemes (and the person's words nearest it) with IDF over the person's turns.

Document frequencies come from a sample of the person's turns scaled to their count (a word the sample barely
holds counted exactly); the counts are kept between recalls while the person's turns stay the same
(``services.memory.termcounts``). ``services.memory.turns`` scores turns by these terms (BM25).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from services.db import BINARY_RESULTS
from services.memory import vocabulary
from services.memory.config import RecallConfig
from services.memory.search import Terms, statement
from services.memory.termcounts import COUNTS, MAX_GROWTH, NOTHING_KEPT, VERSION_SQL, Kept, TermRow
from services.memory.vocabmatrix import MATRICES

# Words that shape a question but never appear in its answer (the stop-word list keeps "name", "kind", ...).
QUESTION_WORDS = frozenset({
    "kind", "kinds", "type", "types", "sort", "name", "names", "mention", "mentioned", "say", "said", "tell",
    "told", "talk", "talked", "think", "thought", "likely", "probably", "describe", "specific", "ever",
    "something", "anything", "thing", "things", "also", "would", "could", "might", "many", "much", "ways",
})  # fmt: skip
# Asking the assistant's own memory ("do you remember?", "you know?", "can u recall …") names nothing the answer holds:
# "remember" found the turn "she said it's decent at remembering stuff" for "how did I mess up my knees, do you
# remember?" (the person's own "I remember" stays).
_YOUR_MEMORY = re.compile(r"\b(?:you|u|ya)\s+(?:(?:still|even|really|happen to|might|may)\s+)?"
                          r"(?:remember|recall|recollect|know)\b", re.IGNORECASE)
RARE_IN_SAMPLE = 5  # a lexeme in fewer sampled lines than this is counted exactly
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")


@dataclass
class LineTerms:
    """The query's lexemes with BM25 IDF over this user's lines, and their average length."""

    terms: Terms = field(default_factory=Terms)
    avg_len: float = 10.0
    total: int = 0
    scale: float = 0.0  # Σ IDF of the terms some line holds
    common: bool = False  # every asked word some line holds is at the df cap: the rarest of them searches
    # With ``common``, the two rarest asked words: the lines holding both are scored first (turns.lexical_lines_sql).
    pair: tuple[str, str] | None = None

    @property
    def max_score(self) -> float:
        """What a line scores when it holds every query term (that any line holds) once at average length."""
        return self.scale or 1.0


def rewrite(query: str) -> str:
    """The query without its question scaffolding ("what kind of", "did ... mention", "do you remember"); names
    stay."""
    kept = [word for word in _WORD.findall(_YOUR_MEMORY.sub(" ", query)) if word.lower() not in QUESTION_WORDS]
    return " ".join(kept) or query


def line_terms(session: Session, user_id: str, query: str, config: RecallConfig,
               expand_by: np.ndarray | None = None, vocabulary_size: int | None = None) -> LineTerms:
    """Lexemes of the (rewritten) query with BM25 IDF = ln(1 + (N − df + ½)/(df + ½)) over the user's lines.

    Document frequencies come from a sample of ``length_sample`` lines, scaled to the user's line count;
    a lexeme the sample barely holds is counted exactly (up to ``df_cap``), which is cheap because it is
    rare. Counting common words exactly was the slowest step of recall on a long history.
    ``expand_by``: a vector of the query; the user's words nearest it join the terms, each at IDF ×
    ``expansion_weight`` × its cosine (``services.memory.vocabulary``), found in the same statement.
    While the model still embeds the query, recall runs the two apart instead (``asked_terms``, then
    ``expanded_terms``): the same terms, one statement more, the first off the wall time. ``vocabulary_size``:
    the person's word count, read in this recall (``vocabmatrix.SIZE_SQL``): their kept vectors pick the kNN's words.
    """
    params: dict[str, Any] = {}
    expanded = _NO_EXPANSION
    if expand_by is not None and config.expands:
        expanded = _nearest(session, user_id, params, expand_by, config, vocabulary_size)
    rows, _ = _term_rows(session, user_id, query, config, expanded, params)
    return _line_terms(rows, rows, config)


@dataclass
class AskedTerms:
    """The asked lexemes' counts (``line_terms`` without the expansion): the sample's size and length on every
    row (one row without a lexeme when the query has none), and the kept counts as of the statement that read them."""

    rows: list[TermRow]
    kept: Kept | None = None

    @property
    def lexemes(self) -> list[str]:
        return [row.lexeme for row in self.rows if row.lexeme is not None]


_NO_EXPANSION = "SELECT CAST(NULL AS text), CAST(NULL AS float8) WHERE false"  # no row
# The user's first ``:sample`` lines by id: their ids from migration 0019's index alone (an index-only range, whatever
# the table holds before them), then those rows. "The first rows in the table's order" scanned everyone's rows stored
# before theirs, and rows by id read in one scan let the planner walk the primary key through everyone's (a person
# holding a fifth of the table looks, to it, as if their rows were spread evenly): 22k pages for 2,000 rows at 150k.
# A statement reads it only when some count is not kept (a CTE is computed when first read).
_SAMPLE = ("s AS MATERIALIZED (SELECT id, search FROM exchange_lines WHERE user_id = :user AND id = ANY(ARRAY("
           "SELECT id FROM exchange_lines WHERE user_id = :user ORDER BY id LIMIT :sample)))")
# The person's version, line count and the highest line id now; the lines they added since the kept counts were
# read (``n``: read only when the kept counts are of a full sample and at
# most MAX_GROWTH lines behind); whether the kept counts (``:known_version``) serve: the current ones (``same``), or
# brought up to date from ``n`` (the line count grew by exactly its lines: none removed, none committed late).
_KEPT = (f"v AS MATERIALIZED (SELECT {VERSION_SQL} AS version, "
         "(SELECT lines FROM exchange_line_counts WHERE user_id = :user) AS lines, "
         "(SELECT max(id) FROM exchange_lines) AS top), "
         "n AS MATERIALIZED (SELECT search FROM exchange_lines WHERE id > :known_top AND user_id = :user "
         "AND :known_n >= :sample AND :known_lines > :known_n AND (SELECT version IS DISTINCT FROM :known_version "
         f"AND lines > :known_lines AND lines - :known_lines <= {MAX_GROWTH} FROM v)), "
         "k AS MATERIALIZED (SELECT coalesce(v.version = :known_version, false) AS same, "
         "coalesce(v.version = :known_version OR (v.lines > :known_lines "
         "AND v.lines - :known_lines = (SELECT count(*) FROM n)), false) AS valid, v.version, v.lines, v.top FROM v)")
# Each lexeme once for every added line holding it (the kept exact counts' increments).
_ADDED = "(SELECT array_agg(x) FROM n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search)) AS x) AS grown_lexemes"
# Whether ``q``'s lexeme is kept: an expansion word's sample count (``:known_sampled``), or an asked word's counts.
_KNOWN = ("(SELECT valid FROM k) AND ((added AND lexeme = ANY(CAST(:known_sampled AS text[]))) "
          "OR (NOT added AND lexeme = ANY(CAST(:known_asked AS text[])))) AS known")
# The sampled lines holding any of the lexemes ``q`` lists and does not know: the sample is read once for all of
# them, and each lexeme is counted over these few lines (a pass over all 2,000 per lexeme was most of the
# statement's CPU).
_SAMPLE_MATCHES = ("m AS MATERIALIZED (SELECT search FROM s WHERE search @@ "
                   "(SELECT CAST(string_agg(quote_literal(lexeme), ' | ') AS tsquery) FROM q WHERE NOT known))")
_SAMPLE_DF = "CASE WHEN q.known THEN NULL ELSE (SELECT count(*) FROM m WHERE m.search @@ q.tsq) END"
# Every lexeme of the sample with its lines' count (a line's tsvector holds a lexeme once), and the version read.
_SAMPLE_COUNTS = (f"WITH {_SAMPLE}, c AS (SELECT x, count(*) AS n FROM "
                  "(SELECT unnest(tsvector_to_array(search)) AS x FROM s) u GROUP BY x) "
                  f"SELECT {VERSION_SQL} AS version, array_agg(c.x) AS lexemes, array_agg(c.n) AS counts FROM c")


def _term_rows(session: Session, user_id: str, query: str, config: RecallConfig, expanded: str,
               params: dict[str, Any]) -> tuple[list[TermRow], Kept | None]:
    """The asked lexemes and the ``expanded`` statement's (lexeme, multiplier) rows with their counts, and the
    sample's statistics on each (on one row without a lexeme when there is none); and the kept counts as of this
    statement's snapshot (None: the person has no turns)."""
    kept = COUNTS.get(session, user_id, config)
    rows = session.execute(
        statement(
            f"WITH {_SAMPLE}, {_KEPT}, "
            "asked AS MATERIALIZED (SELECT lexeme FROM unnest(tsvector_to_array(to_tsvector('english', :query))) "
            "AS q(lexeme) ORDER BY length(lexeme) DESC, lexeme LIMIT :max_terms), "
            # Each lexeme's tsquery is parsed once, not once per sampled line.
            f"q AS MATERIALIZED (SELECT lexeme, mult, added, CAST(quote_literal(lexeme) AS tsquery) AS tsq, {_KNOWN} "
            "FROM (SELECT lexeme, CAST(1 AS float8), false FROM asked "
            f"UNION ALL SELECT e.*, true FROM ({expanded}) AS e) AS a(lexeme, mult, added)), "
            # The sample's size and length: kept ones when valid (the sample is then not read for them).
            "st AS MATERIALIZED (SELECT count(*) AS n, avg(length(search)) AS avg_len FROM s "
            "WHERE NOT (SELECT valid FROM k)), "
            f"{_SAMPLE_MATCHES}, "
            # Materialised: the sample's count is read twice below (it was counted twice).
            f"d AS MATERIALIZED (SELECT q.lexeme, q.mult, q.added, q.tsq, q.known, {_SAMPLE_DF} AS sample_df FROM q) "
            "SELECT d.lexeme, d.mult, d.added, d.known, d.sample_df, st.n, st.avg_len, k.lines, k.version, k.valid, "
            f"k.same, k.top, {_ADDED}, "
            # A lexeme the sample barely holds, when the user has more lines than sampled: counted exactly
            # in the same statement (it used to take one more).
            "CASE WHEN NOT d.known AND NOT d.added AND sn.n >= :sample AND coalesce(k.lines, 0) > greatest(sn.n, 1) "
            "AND d.sample_df < :rare "
            "THEN (SELECT count(*) FROM (SELECT 1 FROM exchange_lines e WHERE e.user_id = :user "
            "AND e.search @@ d.tsq LIMIT :cap) c) END AS exact_df "
            "FROM st CROSS JOIN k CROSS JOIN LATERAL (SELECT CASE WHEN k.valid THEN :known_n ELSE st.n END AS n) sn "
            "LEFT JOIN d ON true"
        ),
        {**params, **(kept.params() if kept else NOTHING_KEPT), "user": user_id,
         "query": rewrite(query) if config.rewrite_query else query, "sample": config.length_sample,
         "max_terms": config.max_query_terms, "rare": RARE_IN_SAMPLE, "cap": config.df_cap},
    ).all()
    first = rows[0]
    if kept is not None and first.valid:
        if not first.same:  # turns were added since: the kept counts brought up to date
            kept = COUNTS.advance(session, user_id, config, kept, first.version, first.lines, first.top,
                                   first.grown_lexemes)
        filled = [_filled(row, kept) for row in rows]
        kept.learn(filled)
        return filled, kept
    fresh = [_row(row, row.sample_df, row.exact_df, row.n, row.avg_len) for row in rows]
    return fresh, COUNTS.put(session, user_id, config, first.version, fresh, first.top)


def _row(row: Any, sample_df: int | None, exact_df: int | None, n: int | None, avg_len: Any) -> TermRow:
    return TermRow(row.lexeme, row.mult, row.added, sample_df, n, avg_len, getattr(row, "lines", None), exact_df)


def _filled(row: Any, kept: Kept) -> TermRow:
    """A row read while ``kept`` was valid: its kept counts where the statement did not count them."""
    if row.lexeme is None or not row.known:
        return _row(row, row.sample_df, row.exact_df, kept.n, kept.avg_len)
    exact = None if row.added else kept.exact[row.lexeme]
    return _row(row, kept.sampled[row.lexeme], exact, kept.n, kept.avg_len)


def asked_terms(session: Session, user_id: str, query: str, config: RecallConfig) -> AskedTerms:
    """The query's own lexemes with their document frequencies and the sample's statistics: everything of
    ``line_terms`` that needs no query vector, so it runs while the model embeds."""
    return AskedTerms(*_term_rows(session, user_id, query, config, _NO_EXPANSION, {}))


def expanded_terms(session: Session, user_id: str, asked: AskedTerms, config: RecallConfig,
                   expand_by: np.ndarray | None = None, vocabulary_size: int | None = None) -> LineTerms:
    """``line_terms`` from ``asked_terms``' rows: with ``expand_by`` (a vector of the query) and the expansion on,
    the user's words nearest it with their sample counts join them. One statement (the kNN needs the vector), unless
    the person's kept vectors give its rows (``vocabmatrix.Matrices.expansion``) and the kept counts hold every
    word's: then none, on the critical path between the query vector and the BM25 arm."""
    rows = list(asked.rows)
    if expand_by is not None and config.expands and asked.rows:
        kept = asked.kept
        expansion = MATRICES.expansion(session, user_id, vocabulary_size, expand_by, config.expansion_words,
                                       config.expansion_min_similarity, config.expansion_weight, asked.lexemes,
                                       kept.read_at if kept is not None else float("inf"))
        computed = expansion.rows
        counts = [kept.sample_count(lexeme) for lexeme, _ in computed] if computed and kept else []
        if computed is not None and kept is not None and None not in counts:
            # The counts as of asked_terms' statement (the asked words' own), where the statement read them as of its
            # own snapshot a few ms later: the same unless the person's turns changed in between.
            rows += [TermRow(lexeme, mult, True, count, kept.n, kept.avg_len, None, None)
                     for (lexeme, mult), count in zip(computed, counts, strict=True)]
        else:
            rows += _expansion_rows(session, user_id, asked, config, expand_by, expansion.among)
    return _line_terms(rows, asked.rows, config)


def count_sample(session: Session, user_id: str, asked: AskedTerms, config: RecallConfig) -> None:
    """Count every lexeme of the sample ``asked``'s kept counts stand for, unless done (``Kept.sample_counts``): an
    expansion word's count is then known without a statement. Once per sample (~5 ms of the server's CPU at 100k
    exchanges); recall calls this while the model embeds the query."""
    kept = asked.kept
    if kept is None or kept.sample_counts is not None or not config.expands:
        return
    row = session.execute(statement(_SAMPLE_COUNTS).execution_options(**{BINARY_RESULTS: True}),
                          {"user": user_id, "sample": config.length_sample}).one()
    if row.version == kept.version:  # the same turns, so the same sample
        kept.sample_counts = dict(zip(row.lexemes or [], row.counts or [], strict=True))


def _expansion_rows(session: Session, user_id: str, asked: AskedTerms, config: RecallConfig, expand_by: np.ndarray,
                    among: list[str] | None) -> list[TermRow]:
    """The expansion's words and their counts by its statement."""
    params: dict[str, Any] = {}
    nearest = vocabulary.nearest_sql(params, expand_by, config.expansion_words, config.expansion_min_similarity,
                                     config.expansion_weight, among)
    kept = asked.kept
    found = session.execute(
        statement(f"WITH {_SAMPLE}, {_KEPT}, asked AS (SELECT unnest(CAST(:asked AS text[])) AS lexeme), "
                  "q AS MATERIALIZED (SELECT lexeme, mult, CAST(quote_literal(lexeme) AS tsquery) AS tsq, "
                  f"{_KNOWN} "
                  f"FROM (SELECT e.*, true FROM ({nearest}) AS e) AS a(lexeme, mult, added)), {_SAMPLE_MATCHES} "
                  f"SELECT q.lexeme, q.mult, true AS added, q.known, {_SAMPLE_DF} AS sample_df, "
                  "CAST(NULL AS bigint) AS exact_df, (SELECT valid FROM k) AS valid FROM q"),
        {**params, **(kept.params() if kept else NOTHING_KEPT), "user": user_id, "asked": asked.lexemes,
         "sample": config.length_sample},
    ).all()
    extra = [_filled(row, kept) if kept is not None and row.known else _row(row, row.sample_df, None, None, None)
             for row in found]
    if kept is not None and found and found[0].valid:  # counted at the kept counts' version
        kept.learn(extra)
    return extra


def _nearest(session: Session, user_id: str, params: dict[str, Any], vector: np.ndarray, config: RecallConfig,
             vocabulary_size: int | None) -> str:
    """The expansion's kNN statement, over the words the person's kept vectors pick when their count is known."""
    among = MATRICES.nearest(session, user_id, vocabulary_size, vector, config.expansion_words)
    return vocabulary.nearest_sql(params, vector, config.expansion_words, config.expansion_min_similarity,
                                  config.expansion_weight, among)


def _line_terms(rows: list[Any], stats: list[Any], config: RecallConfig) -> LineTerms:
    """The terms from the lexemes' ``rows`` (a row without a lexeme is skipped) and the sample's statistics
    (on the first of ``stats``)."""
    rows = [row for row in rows if row.lexeme is not None]
    if not rows:
        return LineTerms()
    first = stats[0]
    sampled, avg_len = int(first.n or 0), float(first.avg_len or 10.0)
    total = sampled
    if sampled >= config.length_sample:  # more lines than sampled: the real count (kept by migration 0010's triggers)
        total = int(first.lines or 0)
    ratio = total / max(sampled, 1)
    dfs = {row.lexeme: _frequency(row, ratio) for row in rows}
    mults = {row.lexeme: float(row.mult) for row in rows}
    added = {row.lexeme for row in rows if row.added}
    # A word no turn holds still counts: a fact or an episode may hold it (it then weighs the most). An
    # expansion word no turn holds has nothing to find.
    found = sorted(((lexeme, df) for lexeme, df in dfs.items() if lexeme not in added or df > 0),
                   key=lambda item: (item[1], item[0]))
    n = max(total, 1)
    idfs = [math.log(1 + (n - df + 0.5) / (df + 0.5)) for _, df in found]
    asked_found = [(lexeme, df) for lexeme, df in found if lexeme not in added]
    # Words at the df cap still score, but the rarer words find the candidates. Expansion words only score:
    # searching by them too found nothing more on LoCoMo and cost ~5 ms of CPU per recall at 100k.
    rare = [(lexeme, df) for lexeme, df in asked_found if df < config.df_cap]
    rare_enough = _searched(rare or asked_found[:1], total, config.match_cap)
    # The score of a line holding every asked word: expansion words add to a line's score, not to this.
    scale = sum(idf for (lexeme, df), idf in zip(found, idfs, strict=True) if df > 0 and lexeme not in added)
    weights = [idf * mults[lexeme] for (lexeme, _), idf in zip(found, idfs, strict=True)]
    common = not rare and bool(asked_found)
    pair = (asked_found[0][0], asked_found[1][0]) if common and len(asked_found) > 1 else None
    unheld = frozenset(lexeme for lexeme, df in asked_found if df == 0)
    return LineTerms(Terms([lexeme for lexeme, _ in found], weights, rare_enough, scale, unheld, config.unsaid_weight),
                     avg_len, total, scale, common, pair)


def _frequency(row: Any, ratio: float) -> int:
    """A lexeme's document frequency: counted exactly, or scaled from the sample. An expansion word is in
    the person's vocabulary, so some line holds it: one the sample missed when it did not cover every line
    is taken as half a sampling step (counting them exactly cost ~1.7 ms a word at 100k exchanges)."""
    if row.exact_df is not None:
        return int(row.exact_df)
    if row.added and not row.sample_df and ratio > 1:
        return max(1, round(ratio / 2))
    return round(int(row.sample_df) * ratio)


def _searched(rare: list[tuple[str, int]], total: int, cap: int) -> list[str]:
    """The lexemes that search the index: the rare ones (rarest first), as many as the scoring cap holds.

    The BM25 statement scores at most ``cap`` matching lines, in no particular order (the oldest, as
    stored). When the rare words may match more lines than that, the rarest ones search alone so that
    the cut never drops a line holding the query's rarest word (a name, a place); the others still score.
    """
    if min(sum(df for _, df in rare), total) <= cap:
        return [lexeme for lexeme, _ in rare]
    kept, matched = [], 0
    for lexeme, df in rare:
        if kept and matched + df > cap:
            break
        kept.append(lexeme)
        matched += df
    return kept

