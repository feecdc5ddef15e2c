"""The SQL arms of recall: vector kNN (HNSW), IDF-weighted full-text (GIN) and time windows.

Every statement here is filtered by ``user_id`` in SQL. Full-text uses an OR of the query's
informative lexemes (``plainto_tsquery`` would AND them, too strict for questions) and scores
a row by the IDF-weighted share of the query's lexemes it contains, so rare words such as
names weigh more than common ones (``ts_rank_cd`` alone has no IDF).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import Connection, TextClause, bindparam, text
from sqlalchemy.orm import Session

from services.db import EMBEDDING_DIM, vector_text
from services.memory.config import RecallConfig
from services.memory.timewords import Window


@dataclass(frozen=True)
class KindSql:
    """How one kind of memory is queried: its table, filters and per-row signal expressions."""

    source: str  # FROM clause with the alias t
    active: str
    time: str
    salience: str
    access: str
    columns: str
    lexemes: str = "t.search"  # its tsvector as the lexical signal reads it (``_read_once``)


KINDS: dict[str, KindSql] = {
    "exchange": KindSql(
        "exchanges t LEFT JOIN memory_chunks c ON c.exchange_id = t.id "
        "LEFT JOIN exchange_access a ON a.exchange_id = t.id",
        "TRUE", "coalesce(t.occurred_at, t.created_at)", "c.salience", "coalesce(a.access_count, 0)",
        "t.user_text, t.reply, t.external_id, t.thread_id, t.session_id, ARRAY[t.id] AS exchange_ids",
    ),
    "fact": KindSql(
        "facts t", "t.superseded_at IS NULL", "t.updated_at", "t.salience", "t.access_count",
        "t.text, t.confidence, t.source_exchange_ids AS exchange_ids, t.created_at",
    ),
    "episode": KindSql(
        "episodes t", "TRUE", "coalesce(t.ended_at, t.created_at)", "t.salience", "t.access_count",
        "t.title, t.gist, t.summary, t.outcome, t.open_loops, t.exchange_ids, t.started_at, t.session_id",
        "t.search || ''::tsvector",  # the same tsvector, read from TOAST once (renr: ~9 reads a row before)
    ),
}
TABLES = {"exchange": "exchanges", "fact": "facts", "episode": "episodes"}


@dataclass
class Terms:
    """The query's lexemes with IDF weights, and the OR tsquery over the informative ones."""

    lexemes: list[str] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    filter_lexemes: list[str] = field(default_factory=list)  # the ones rare enough to search the index by
    # Σ IDF of the asked lexemes some turn of the person holds (a turn's BM25 scale), the asked lexemes none holds and
    # the share of their weight that counts against a fact or an episode without them (``_lex_sql``; held 0: all).
    held: float = 0.0
    unheld: frozenset[str] = frozenset()
    unsaid_weight: float = 1.0

    @property
    def tsquery(self) -> str:
        return " | ".join(quote_lexeme(lexeme) for lexeme in (self.filter_lexemes or self.lexemes))

    def __bool__(self) -> bool:
        return bool(self.lexemes)


@dataclass
class Candidate:
    kind: str
    id: int
    row: dict[str, Any]
    at: dt.datetime | None
    sim: float | None
    lex: float
    salience: float | None
    access: int

    def turn_text(self) -> str | None:
        """The text of the turn it is (an exchange candidate is a turn), else None."""
        return self.row.get("text") if self.kind == "exchange" else None

    def speaker(self) -> str | None:
        """Who said the turn it is (an exchange candidate is a turn), else None."""
        return self.row.get("speaker") if self.kind == "exchange" else None

    def speaker_similarity(self) -> float | None:
        """A named speaker's turn's own similarity to the question (``speakers``), else None."""
        return self.row.get("speaker_sim")

    def line_id(self) -> int:
        """The turn's id (0 for a fact or an episode): the last key of the order of equal scores."""
        return self.row.get("id", 0)

    def turn_columns(self) -> tuple[str | None, str | None, float | None, int]:
        """What scoring reads of every candidate, in one call: its turn's text, speaker, speaker similarity, id."""
        return self.turn_text(), self.speaker(), self.speaker_similarity(), self.line_id()


def quote_lexeme(lexeme: str) -> str:
    """A lexeme as a tsquery term."""
    return "'" + lexeme.replace("'", "''") + "'"


class QueryVector(Vector):
    """pgvector's type, binding a numpy array as text once per array: a recall binds its query vector
    in several statements, and pgvector formats 384 floats one ``str()`` at a time (~0.5 ms each)."""

    cache_ok = True
    _last: tuple[bytes, str] = (b"", "")

    def bind_processor(self, dialect: Any) -> Any:
        base = super().bind_processor(dialect)

        def process(value: Any) -> Any:
            if not isinstance(value, np.ndarray):
                return base(value)
            key = value.tobytes()
            last = QueryVector._last
            if last[0] != key:
                last = (key, vector_text(value))
                QueryVector._last = last
            return last[1]

        return process


def vector_param() -> Any:
    """The ``:qvec`` bind parameter, typed so a numpy array binds as a pgvector."""
    return bindparam("qvec", type_=QueryVector(EMBEDDING_DIM))


@lru_cache(maxsize=256)
def statement(sql: str, qvec: bool = False, spk_vec: bool = False) -> TextClause:
    """``text(sql)``, with ``:qvec`` (``vector_param``) and ``:spk_vec`` typed as vectors when asked, built once
    per distinct SQL: recall's statements differ only by which arms they hold, and building the clause (its
    bind parameters parsed, its cache key computed) cost ~0.1–0.3 ms of CPU a statement, every recall."""
    clause = text(sql)
    if qvec:
        clause = clause.bindparams(vector_param())
    if spk_vec:
        clause = clause.bindparams(bindparam("spk_vec", type_=QueryVector(EMBEDDING_DIM)))
    return clause


def prepare_vector_search(session: Session, config: RecallConfig | None = None) -> None:
    """Search settings for this transaction: wider HNSW search that keeps scanning when the user filter
    drops rows, a plan made for each statement's own values, and no JIT compilation.

    Every user-filtered ``ORDER BY embedding <=>`` needs the first: without it the index returns the
    nearest rows of all users and the filter may leave none of this user's. The second because psycopg
    prepares a statement on its fifth run and PostgreSQL may then switch to a generic plan, blind to how
    many rows a tsquery matches: the full-text arms went from 2–12 ms to 17–25 ms whatever they matched.
    """
    session.execute(text(f"SELECT {SEARCH_SETTINGS_SQL}"), search_settings(config))


# prepare_vector_search's settings as a select list (``:ef``), for a statement that also asks something else.
# JIT off: a server built with LLVM compiles any plan costed above jit_above_cost (100,000), ~10–50 ms per
# statement, far more than these statements run (the costliest, the terms' sample, is costed ~37,000 at 100k
# exchanges and grows with the history); the embedded server has no JIT provider, a system one may.
# No parallel workers: a large person's statements hold branches planned over their ~75k turns that a one-time filter
# skips (``small_person_sql``), and a Gather launched its two workers all the same, ~5–6 ms of wall time for each such
# branch at a million exchanges (bench/tenants.py); recall's statements read a few hundred rows by design.
SEARCH_SETTINGS_SQL = ("set_config('hnsw.ef_search', :ef, true), set_config('hnsw.iterative_scan', 'relaxed_order', "
                       "true), set_config('plan_cache_mode', 'force_custom_plan', true), "
                       "set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)")
SEARCH_SETTINGS_COLUMNS = SEARCH_SETTINGS_SQL.count("set_config(")  # the select list's columns it takes


def search_settings(config: RecallConfig | None = None) -> dict[str, Any]:
    """The parameters of SEARCH_SETTINGS_SQL."""
    return {"ef": str((config or RecallConfig()).ef_search)}


def holds_sql(kind: str) -> str:
    """Whether the user (``:user``) holds any row of this kind that recall could return, as a SQL boolean:
    a user without facts or episodes (most chat users, every import without enrichment) skips their statements."""
    return f"EXISTS (SELECT 1 FROM {TABLES[kind]} t WHERE t.user_id = :user AND {KINDS[kind].active})"


def _lex_sql(terms: Terms, params: dict[str, Any], search: str = "t.search") -> str:
    """Σ idf(matched lexemes) / Σ idf(query lexemes), in 0..1, of the tsvector ``search``.

    With ``terms.held``, a word no turn of the person holds counts ``terms.unsaid_weight`` of its weight against a row
    without it (all of it with it): the fact "… my knees have been bad since I hurt them playing cricket …" held a
    fifth of "how did I mess up my knees, do you remember?", "mess" never said, and stayed under ``min_relevance``.
    """
    if not terms:
        return "0.0"
    total = sum(terms.weights) or 1.0
    scale = total - sum(w for lexeme, w in zip(terms.lexemes, terms.weights, strict=True) if lexeme in terms.unheld)
    scale = scale if terms.held > 0 and scale > 0 else total
    parts, unheld, unsaid = [], [], 0.0
    for index, (lexeme, weight) in enumerate(zip(terms.lexemes, terms.weights, strict=True)):
        params[f"lx{index}"] = quote_lexeme(lexeme)
        params[f"lw{index}"] = weight / scale
        parts.append(f"CASE WHEN {search} @@ CAST(:lx{index} AS tsquery) THEN :lw{index} ELSE 0 END")
        if lexeme in terms.unheld:
            unheld.append(parts[-1])
            unsaid += weight / scale
    matched = "(" + " + ".join(parts) + ")"
    if terms.held <= 0:
        return matched
    if not unheld:
        return f"least(1.0, {matched})"
    params["unsaid"], params["unsaid_rest"] = terms.unsaid_weight * unsaid, 1.0 - terms.unsaid_weight
    return f"least(1.0, {matched} / (1.0 + :unsaid + :unsaid_rest * ({' + '.join(unheld)})))"


def small_person_sql(exact_lines: int) -> str:
    """Whether the person (``:user``) has at most ``exact_lines`` turns, as a SQL boolean on no row of the query
    (one primary-key read of ``exchange_line_counts``): a one-time filter that gates a branch before it runs."""
    return (f"(SELECT coalesce(max(c.lines), 0) <= {int(exact_lines)} FROM exchange_line_counts c "
            "WHERE c.user_id = :user)")


def vector_sql(kind: str, exact_lines: int = 0) -> str:
    """The vector arm's statement (``:qvec``, its row limit in ``:limit``).

    ``exact_lines`` > 0, exchanges only: a person with at most that many turns (``exchange_line_counts``, one row
    read) is searched exactly, over their own rows, and only a larger one through the HNSW index. The index walks
    everyone's nearest rows and drops the others': a person holding 0.03 % of a million exchanges kept a few of their
    own 10 nearest, or none, when pgvector's iterative scan gave up (``hnsw.max_scan_tuples``), while their exact
    search costs a few hundred distances (bench/tenants.py). Each branch is gated by a condition on no row, which
    PostgreSQL evaluates once before the branch runs: the other branch costs nothing.
    """
    spec = KINDS[kind]
    base = f"SELECT t.id FROM {TABLES[kind]} t WHERE t.user_id = :user AND {spec.active} "
    indexed = "ORDER BY t.embedding <=> :qvec LIMIT :limit"
    if kind != "exchange" or exact_lines <= 0:
        return base + indexed
    small = small_person_sql(exact_lines)
    # "+ 0" keeps the planner off the HNSW index in the exact branch (as window_sql does).
    return (f"({base}AND t.embedding IS NOT NULL AND {small} ORDER BY (t.embedding <=> :qvec) + 0 LIMIT :limit) "
            f"UNION ALL ({base}AND NOT {small} {indexed})")


def _lexical_sql(kind: str, terms: Terms, params: dict[str, Any], config: RecallConfig) -> str:
    params.update(tsq=terms.tsquery, cap=config.match_cap)
    # Score at most match_cap matching rows: the rare words keep that set small; the cap bounds the worst case.
    return (f"SELECT t.id FROM (SELECT t.id, {KINDS[kind].lexemes} AS search FROM {TABLES[kind]} t "
            "WHERE t.user_id = :user "
            f"AND {KINDS[kind].active} AND t.search @@ CAST(:tsq AS tsquery) LIMIT :cap) t "
            f"ORDER BY {_lex_sql(terms, params)} DESC, ts_rank_cd(t.search, CAST(:tsq AS tsquery), 32) DESC "
            "LIMIT :limit")


def window_sql(kind: str, window: Window, qvec: np.ndarray | None, terms: Terms, params: dict[str, Any]) -> str:
    """The time window arm's statement (its row limit in ``:limit``); its other values go into ``params``."""
    params.update(start=window[0], end=window[1])
    source = f"{TABLES[kind]} t"
    if qvec is not None:
        # Exact distances over the window's rows (the time index finds them): "+ 0" keeps the planner off
        # HNSW, whose scan filtered by a month's window took 30–220 ms at 100k exchanges.
        order = "(t.embedding <=> :qvec) + 0"
        params["qvec"] = qvec
    else:
        source, search = _read_once(kind, source, terms)
        order = _lex_sql(terms, params, search) + " DESC"
    spec = KINDS[kind]
    return (f"SELECT t.id FROM {source} WHERE t.user_id = :user AND {spec.time} >= :start "
            f"AND {spec.time} < :end ORDER BY {order} LIMIT :limit")


def _read_once(kind: str, source: str, terms: Terms) -> tuple[str, str]:
    """``source`` (alias t) with the kind's tsvector read once a row, and the column to read it by: an episode's
    row (its vector inline, 0017) passes the TOAST threshold, its tsvector lies out of line and each ``@@`` read it
    again (OFFSET 0 keeps the copy from being inlined into each)."""
    lexemes = KINDS[kind].lexemes
    if not terms or lexemes == "t.search":
        return source, "t.search"
    return f"{source} CROSS JOIN LATERAL (SELECT {lexemes} AS search OFFSET 0) s", "s.search"


def kind_candidates(session: Session | Connection, kind: str, user_id: str, qvec: np.ndarray | None, terms: Terms,
                    window: Window | None, limit: int, config: RecallConfig) -> list[Candidate]:
    """The candidates of one kind from every arm (vector, lexical, time window) with their signals, in one
    statement, without a round trip per arm (on recall's connection or ``sidearms``'; the arms one by one are the
    test's oracle, tests/test_recall_speed.py)."""
    params: dict[str, Any] = {"user": user_id, "limit": limit}
    arms = []
    if qvec is not None:
        arms.append(vector_sql(kind, exact_lines=config.exact_lines))
    if terms:
        arms.append(_lexical_sql(kind, terms, params, config))
    if window is not None and kind != "fact":
        arms.append(window_sql(kind, window, qvec, terms, params))
    if not arms:
        return []
    union = " UNION ".join(f"({arm})" for arm in arms)
    return _candidates(session, kind, f"t.id IN ({union})", params, qvec, terms)


def _candidates(session: Session | Connection, kind: str, where: str, params: dict[str, Any], qvec: np.ndarray | None,
                terms: Terms) -> list[Candidate]:
    spec = KINDS[kind]
    sim = "1 - (t.embedding <=> :qvec)" if qvec is not None else "NULL"
    source, search = _read_once(kind, spec.source, terms)
    sql = (f"SELECT t.id, {spec.columns}, {spec.time} AS at, {sim} AS sim, {_lex_sql(terms, params, search)} AS lex, "
           f"{spec.salience} AS salience, {spec.access} AS access FROM {source} "
           f"WHERE t.user_id = :user AND {where}")
    if qvec is not None:
        params["qvec"] = qvec
    candidates = []
    for row in session.execute(statement(sql, qvec is not None), params).mappings():
        data = dict(row)
        candidates.append(Candidate(
            kind=kind, id=int(data["id"]), row=data, at=data["at"],
            sim=None if data["sim"] is None else float(data["sim"]), lex=float(data["lex"] or 0.0),
            salience=None if data["salience"] is None else float(data["salience"]), access=int(data["access"] or 0),
        ))
    return candidates
