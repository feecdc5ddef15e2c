"""Turn-level recall arms: BM25 over single lines (turns), and the span that answers.

Every exchange is stored as its lines (``exchange_lines``, migration 0007). A line is scored by
Okapi BM25 computed in PostgreSQL from its ``tsvector``: term frequency from the lexeme's
positions, document length from the number of lexemes, IDF from this user's lines:

    bm25 = Σ idf(q) · tf·(k1 + 1) / (tf + k1·(1 − b + b·len/avglen))

A named speaker's name is part of the line's vector, so "what did Caroline say about X" matches
Caroline's own lines (speaker-aware) as well as lines that mention her. The span returned for a
line is the line with the line it replies to (the previous line of its thread).
The query's terms and their IDF: ``services.memory.lineterms``.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db import BINARY_RESULTS
from services.memory.config import RecallConfig
from services.memory.lineterms import LineTerms
from services.memory.search import quote_lexeme, small_person_sql, statement


def bm25_sql(alias: str, terms: LineTerms, config: RecallConfig, params: dict[str, Any]) -> str:
    """BM25 of the row ``alias`` (its ``search`` vector) against the query terms, as a SQL expression."""
    if not terms.terms:
        return "0.0"
    params.update(q_lexemes=terms.terms.lexemes, q_idfs=terms.terms.weights, k1=config.bm25_k1, b=config.bm25_b,
                  avg_len=max(terms.avg_len, 1.0), q_any=" | ".join(quote_lexeme(lx) for lx in terms.terms.lexemes))
    tf = "coalesce(array_length(u.positions, 1), 1)"
    # Only the row's query lexemes are unnested (setweight marks them A, ts_filter keeps the A's; stored
    # vectors carry the default weight D): a quarter less time than joining every lexeme of the line.
    # A row holding none of them (most turns around the seeds) scores 0 after one @@, without unnesting.
    matched = f"ts_filter(setweight({alias}.search, 'A', CAST(:q_lexemes AS text[])), '{{a}}')"
    return (f"(CASE WHEN {alias}.search @@ CAST(:q_any AS tsquery) THEN (SELECT coalesce(sum(q.idf * {tf} * "
            f"(:k1 + 1) / ({tf} + :k1 * (1 - :b + :b * length({alias}.search) / :avg_len))), 0) "
            f"FROM unnest({matched}) u "
            f"JOIN unnest(CAST(:q_lexemes AS text[]), CAST(:q_idfs AS float8[])) AS q(lexeme, idf) "
            f"ON q.lexeme = u.lexeme) ELSE 0 END)")


def lexical_lines(session: Session, user_id: str, terms: LineTerms, limit: int, config: RecallConfig) -> list[int]:
    """Ids of the user's lines with the best BM25 among those holding a rare query term (GIN index)."""
    if not terms.terms:
        return []
    params: dict[str, Any] = {"user": user_id, "limit": limit}
    return list(session.scalars(statement(lexical_lines_sql(terms, config, params)), params))


def lexical_lines_sql(terms: LineTerms, config: RecallConfig, params: dict[str, Any], limit: str = "limit") -> str:
    """``lexical_lines``' statement (its row limit in the parameter named ``limit``; the query terms must
    be non-empty); its other values go into ``params``."""
    # A query of common words only searches by the rarest of them: its matches may be scored fewer.
    params.update(tsq=terms.terms.tsquery, cap=config.common_match_cap if terms.common else config.match_cap)
    score = bm25_sql("t", terms, config, params)
    return (f"SELECT t.id FROM ({_matches_sql(terms, params, config.exact_lines)}) t ORDER BY {score} DESC, t.id "
            f"LIMIT :{limit}")


def _matches_sql(terms: LineTerms, params: dict[str, Any], exact_lines: int = 0) -> str:
    """The (at most ``:cap``) matching lines the BM25 arm scores."""
    if terms.pair is None:
        return f"{_matching('tsq', exact_lines)} LIMIT :cap"
    # A common word's matches beyond the cap are cut in storage order (the oldest kept), an arbitrary subset;
    # the lines that also hold the second rarest word come first, the rest fill up to the cap (the Append stops
    # there). Those lines are where BM25's best are: at 100k, 300 so chosen kept more of the uncapped top ten
    # than the first 1,000 (bench/recall_rounds.md, rlat7).
    params["pair"] = " & ".join(quote_lexeme(lexeme) for lexeme in terms.pair)
    return (f"SELECT * FROM ({_matching('pair', exact_lines)} UNION ALL "
            f"{_matching('tsq', exact_lines, 'AND NOT search @@ CAST(:pair AS tsquery)')}) m LIMIT :cap")


def _matching(tsquery: str, exact_lines: int, also: str = "") -> str:
    """The person's lines matching the tsquery parameter ``tsquery`` (and ``also``), as a parenthesised SELECT.

    ``exact_lines`` > 0: a person with at most that many turns is matched over their own rows (migration 0019's
    index, in id order), not by the full-text index, whose posting lists hold everyone's turns: a word's list grows
    with the whole database, a small person's rows do not (bench/tenants.py). Each branch is gated once
    (``search.small_person_sql``); the other costs nothing."""
    matches = f"search @@ CAST(:{tsquery} AS tsquery) {also}"
    indexed = f"SELECT id, search FROM exchange_lines WHERE user_id = :user AND {matches}"
    if exact_lines <= 0:
        return f"({indexed})"
    small = small_person_sql(exact_lines)
    # OFFSET 0: the match is tested on the person's rows as read, never pushed down to the full-text index.
    own = (f"SELECT id, search FROM (SELECT id, search FROM exchange_lines WHERE user_id = :user AND {small} "
           f"ORDER BY id OFFSET 0) o WHERE {matches}")
    return f"(({own}) UNION ALL ({indexed} AND NOT {small}))"


def window_rows(session: Session, user_id: str, seed_arms: list[str], exchange_arms: list[str], reach: int,
                qvec: np.ndarray | None, terms: LineTerms, config: RecallConfig,
                speaker: tuple[str, np.ndarray] | None = None,
                arm_params: dict[str, Any] | None = None) -> LineRows:
    """The seed lines (the lines that ``seed_arms``' statements find, and every line of the exchanges that
    ``exchange_arms``' statements find: seeds too) and ``reach`` lines either side of each in its thread,
    with their signals; ``seed`` tells a seed row. The arms run inside this statement (each took a round
    trip of its own); ``arm_params`` are their values, ``:user``, ``:qvec`` and the BM25 terms' shared.

    Each row carries its own BM25 (``lex``), the similarity of its exchange to the query (``sim``) and
    that exchange's salience, access count and time; with ``speaker`` (a lower-case name and a vector,
    ``:spk_name`` and ``:spk_vec`` to the arms too), a line of that speaker carries its own similarity to
    that vector (``speaker_sim``, else NULL). The rows come in thread order (``LineRows``); a row's
    ``previous`` (``p_id`` in its dict) is the line before it in the thread. The ranges are contiguous, so
    that is the previous fetched row of the thread, except at a range's first row (which may follow a gap):
    callers use links only within ``reach`` − 1 of a seed.
    """
    if not seed_arms and not exchange_arms:
        return LineRows(("id", "exchange_id", "line_thread", "first", *_EXCHANGE_NAMES), [])
    params: dict[str, Any] = {**(arm_params or {}), "user": user_id, "reach": reach}
    sim = "1 - (e.embedding <=> :qvec)" if qvec is not None else "NULL"
    speaker_sim = "NULL"
    if speaker is not None:
        speaker_sim = "CASE WHEN lower(l.speaker) = :spk_name THEN 1 - (l.embedding <=> :spk_vec) END"
        params.update(spk_name=speaker[0], spk_vec=speaker[1])
    sql = (
        "WITH seeds AS (SELECT id, thread_id, thread_pos FROM exchange_lines "
        f"WHERE user_id = :user AND (id = ANY({_ids(seed_arms)}) OR exchange_id = ANY({_ids(exchange_arms)}))), "
        f"{_SPANS}, "
        # Each span is one range of the thread's positions (migration 0016): one index read, rows and all, where
        # the lines after and before each seed took two probes and then a fetch of every line by its id.
        "lines AS MATERIALIZED (SELECT l.id, l.exchange_id, l.thread_id AS line_thread, l.speaker, l.text, "
        f"l.external_id, l.occurred_at, {bm25_sql('l', terms, config, params)} AS lex, {speaker_sim} AS speaker_sim, "
        "l.id IN (SELECT id FROM seeds) AS seed FROM spans r JOIN exchange_lines l ON l.user_id = :user "
        "AND l.thread_id = r.thread_id AND l.thread_pos BETWEEN r.lo AND r.hi), "
        # The query's similarity once per exchange, not once per line: each one reads the vector from TOAST.
        # Not the exchange's texts, thread or session: only the hits show them (``exchange_texts``), and reading and
        # sending them for every fetched exchange (~550, TOASTed beside the vector) was ~1.3 ms of this statement's CPU.
        f"owners AS MATERIALIZED (SELECT e.id, {sim} AS sim, "
        "coalesce(e.occurred_at, e.created_at) AS at FROM exchanges e "
        "WHERE e.id = ANY(ARRAY(SELECT DISTINCT exchange_id FROM lines))) "
        "SELECT l.id, l.exchange_id, l.line_thread, l.speaker, l.text, l.external_id, l.occurred_at, l.lex, e.sim, "
        # An exchange's own columns on its first line in thread order only (its lines follow one another there):
        # sent once, not once per line; shared with its other lines (LineRows). The window is the statement's own
        # order, one sort for both (a min(id) per exchange joined back cost ~0.35 ms more).
        f"l.speaker_sim, l.seed, {_FIRST} AS first, "
        + ", ".join(f"CASE WHEN {_FIRST} THEN {value} END AS {name}" for name, value in _EXCHANGE_COLUMNS)
        + " FROM lines l JOIN owners e ON e.id = l.exchange_id "
        "LEFT JOIN memory_chunks c ON c.exchange_id = e.id LEFT JOIN exchange_access a ON a.exchange_id = e.id "
        # In thread order (byte order of the thread id, as Python compares it): sorting here costs less.
        f"ORDER BY {_THREAD_ORDER}"
    )
    if qvec is not None:
        params["qvec"] = qvec
    result = session.execute(statement(sql, qvec is not None, speaker is not None), params,
                             execution_options={BINARY_RESULTS: True})
    keys = tuple(result.keys())
    # The driver's tuples, all fetched at once, kept as they are: gather reads columns of all of them as arrays
    # and makes a dict of the few hundred candidate rows only (a dict per row of ~700–1,000 cost ~1.5 ms).
    rows = result.cursor.fetchall()
    result.close()
    return LineRows(keys, rows)


# The seeds' ranges of ``:reach`` positions either side, merged where they overlap or touch: a seed starts a new span
# when it lies more than 2·reach + 1 positions after the previous seed of its thread (the spans are then disjoint,
# so no line is read twice). CTEs ``marked``, ``grouped`` and ``spans`` (thread_id, lo, hi) over window_rows' seeds.
_SPANS = ("marked AS (SELECT thread_id, thread_pos, coalesce(thread_pos > lag(thread_pos) OVER (PARTITION BY thread_id "
          "ORDER BY thread_pos) + 2 * :reach + 1, TRUE) AS starts FROM seeds), "
          "grouped AS (SELECT thread_id, thread_pos, count(*) FILTER (WHERE starts) OVER (PARTITION BY thread_id "
          "ORDER BY thread_pos) AS run FROM marked), "
          "spans AS (SELECT thread_id, min(thread_pos) - :reach AS lo, max(thread_pos) + :reach AS hi "
          "FROM grouped GROUP BY thread_id, run)")


_THREAD_ORDER = 'l.line_thread COLLATE "C", l.occurred_at, l.id'
_FIRST = f"l.exchange_id IS DISTINCT FROM lag(l.exchange_id) OVER (ORDER BY {_THREAD_ORDER})"


# The exchange's columns of a row (name, SQL over window_rows' ``owners`` e, ``memory_chunks`` c, ``exchange_access``
# a), sent on the exchange's first line in thread order only. Its texts, thread and session, which only a returned
# hit shows, are read for those few (``exchange_texts``): for ~200–300 exchanges a recall they were 40% of the bytes.
_EXCHANGE_COLUMNS = (("at", "e.at"), ("salience", "c.salience"), ("access", "coalesce(a.access_count, 0)"))
_EXCHANGE_NAMES = tuple(name for name, _ in _EXCHANGE_COLUMNS)
AT, SALIENCE, ACCESS = (_EXCHANGE_NAMES.index(name) for name in ("at", "salience", "access"))
TURN_COLUMNS = ("text", "speaker", "speaker_sim", "id")


class LineRows:
    """``window_rows``' rows: the driver's tuples in thread order, with their column names.

    ``previous[i]``: the index of the row before row ``i`` in its thread (−1 at a thread's first fetched row).
    ``exchanges``: each exchange's own columns (``_EXCHANGE_COLUMNS``: on its first line's tuple in thread order)."""

    def __init__(self, keys: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        self.keys, self.rows = keys, rows
        self.index = {key: position for position, key in enumerate(keys)}
        threads = self.column("line_thread")
        same = [False] + [a == b for a, b in zip(threads, threads[1:], strict=False)]
        self.previous = np.where(np.array(same, dtype=bool), np.arange(len(rows)) - 1, -1)
        first, exchange = self.index["first"], self.index["exchange_id"]
        own = itemgetter(*(self.index[name] for name in _EXCHANGE_NAMES))  # a tuple of the three columns
        self.exchanges = {row[exchange]: own(row) for row in rows if row[first]}
        turn = [self.index.get(name) for name in TURN_COLUMNS]  # (an empty result has no such columns)
        # A row's TURN_COLUMNS (text, speaker, speaker_sim, id): what scoring reads of every candidate turn.
        self.turn_of = itemgetter(*turn) if None not in turn else None

    def exchange_columns(self, i: int) -> tuple[Any, ...]:
        """Row ``i``'s exchange's own columns, in ``_EXCHANGE_COLUMNS``' order."""
        return self.exchanges[self.rows[i][self.index["exchange_id"]]]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, key: str) -> list[Any]:
        position = self.index[key]
        return [row[position] for row in self.rows]

    def floats(self, key: str) -> np.ndarray:
        """A numeric column as float64, NULL as NaN."""
        position = self.index[key]
        return np.array([np.nan if row[position] is None else row[position] for row in self.rows], dtype=np.float64)

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a dict, with its exchange's columns and ``p_id`` (the line before it in its thread)."""
        data = dict(zip(self.keys, self.rows[i], strict=True))
        data.update(zip(_EXCHANGE_NAMES, self.exchanges[data["exchange_id"]], strict=True))
        before = int(self.previous[i])
        data["p_id"] = int(self.rows[before][self.index["id"]]) if before >= 0 else None
        return data


def _ids(arms: list[str]) -> str:
    """The ids the arms' statements return, as one SQL array (computed once, before the rows that use it)."""
    if not arms:
        return "CAST('{}' AS bigint[])"
    return "ARRAY(" + " UNION ALL ".join(f"({arm})" for arm in arms) + ")"


def lines_by_exchange(session: Session, user_id: str, exchange_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The lines of each given exchange, in order."""
    if not exchange_ids:
        return {}
    found: dict[int, list[dict[str, Any]]] = {}
    for row in session.execute(
        text("SELECT id, exchange_id, speaker, text, external_id, occurred_at FROM exchange_lines "
             "WHERE user_id = :user AND exchange_id = ANY(:ids) ORDER BY exchange_id, position, id"),
        {"user": user_id, "ids": exchange_ids},
    ).mappings():
        found.setdefault(int(row["exchange_id"]), []).append(line_dict(row))
    return found


def exchange_texts(session: Session, user_id: str, exchange_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Each given exchange's thread, session and texts (what an exchange hit's ``meta`` shows), by id."""
    if not exchange_ids:
        return {}
    rows = session.execute(statement("SELECT id, thread_id, session_id, user_text, reply FROM exchanges "
                                     "WHERE user_id = :user AND id = ANY(:ids)"),
                           {"user": user_id, "ids": exchange_ids})
    return {int(row.id): {"thread_id": row.thread_id, "session_id": row.session_id, "user_text": row.user_text,
                          "reply": row.reply} for row in rows}


def line_dict(row: Any, prefix: str = "") -> dict[str, Any]:
    """A line as a hit lists it (``prefix`` "p_": the replied-to line's columns of a span row)."""
    return {"line_id": int(row[f"{prefix}id"]), "exchange_id": int(row[f"{prefix}exchange_id"]),
            "speaker": row[f"{prefix}speaker"], "text": row[f"{prefix}text"],
            "external_id": row[f"{prefix}external_id"], "at": row[f"{prefix}occurred_at"]}


def render(lines: list[dict[str, Any]]) -> str:
    """Lines as text: a person's name before what they said; a chat's roles stay implicit."""
    return "\n".join(line["text"] if line["speaker"] in ("user", "assistant") else f"{line['speaker']}: {line['text']}"
                     for line in lines)
