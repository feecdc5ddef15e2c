"""Hybrid recall: vector kNN + IDF-weighted full-text (+ a time-window arm), fused, then reranked.

``recall()`` gathers candidates of each kind (exchanges, facts, episodes) from the SQL arms in
``services.memory.search``, computes every signal exactly for each candidate, fuses relevance
(``scoring.fused``: calibrated cosine and lexical score, weighted), multiplies it by boosts for recency (exp(−λ·Δt) from
the timestamp, at query time), salience, access reinforcement and a matching time window,
returns exchange hits as spans of turns, and counts the access of what it returns.
A question naming a speaker of the user's conversations is also matched against that speaker's own
turns (``services.memory.speakers``). Without an embedder (the web process) it is full-text only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from services.embeddings import Embedder, for_requests
from services.memory import access, focus, search, sidearms, spans, speakers, turns, turnshape, vocabmatrix
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.lineterms import LineTerms, asked_terms, count_sample, expanded_terms, line_terms
from services.memory.scored import Scored
from services.memory.scoring import score_candidates
from services.memory.search import Candidate
from services.memory.timewords import Window, time_window

KINDS = ("exchange", "fact", "episode")


@dataclass
class RecallHit:
    text: str
    kind: str  # "exchange" | "fact" | "episode"
    score: float
    signals: dict[str, float]
    exchange_ids: list[int]
    external_ids: list[str]
    id: int
    at: dt.datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    lines: list[dict[str, Any]] = field(default_factory=list)  # the turns it holds, in order, with their ids

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (timestamps as ISO strings)."""
        data = asdict(self)
        data["at"] = self.at.isoformat() if self.at else None
        for item in data["lines"]:
            item["at"] = item["at"].isoformat() if isinstance(item.get("at"), dt.datetime) else item.get("at")
        data["meta"] = {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in self.meta.items()}
        return data


def recall(session: Session, embedder: Embedder | None, user_id: str, query: str, *, k: int = 10,
           query_embedding: np.ndarray | None = None, config: MemoryConfig | RecallConfig | None = None,
           kinds: Iterable[str] = KINDS, now: dt.datetime | None = None, reinforce: bool = True,
           exclude_exchange_ids: Iterable[int] = ()) -> list[RecallHit]:
    """The ``k`` memories of ``user_id`` most relevant to ``query``, best first.

    Args:
        embedder: embeds the query when ``query_embedding`` is not given; None → full-text only.
        config: recall weights (``configs/memory.toml``); None → built-in defaults.
        now: the clock for recency and relative dates ("last May"); None → the current time.
        reinforce: count an access of each returned item (off for browsing and benchmarks).
        exclude_exchange_ids: exchanges the caller already shows (e.g. working memory).
    """
    cfg = config.recall if isinstance(config, MemoryConfig) else (config or RecallConfig())
    # The question is embedded once and kept nowhere: the faster graph of a pair (embeddings.PairedEmbedder).
    embedder = for_requests(embedder) if embedder is not None else None
    query = (query or "").strip()
    if not query or k < 1:
        return []
    now = now or dt.datetime.now(dt.UTC)
    kinds = tuple(kinds)
    by_speaker = embedder is not None and cfg.speaker_weight > 0 and "exchange" in kinds
    words = speakers.name_words(query) if by_speaker else []
    # The model runs on another thread while the statements that need no vector run here (ONNX and the
    # wait on PostgreSQL both release the GIL): the query embedding costs no wall time up to their length.
    ahead = _embed_ahead(embedder, user_id, query, query_embedding, words)
    kinds, name, own_only, vocabulary_size = _open(session, user_id, kinds, cfg, words)
    if embedder is not None and name is not None and (ahead is None or ahead[1] is None):
        # A name not guessed: its nameless vector embeds from now, beside the query's own (speakers.nameless_ahead).
        ahead = speakers.nameless_ahead(sidearms.side_pool(), embedder, query, name, ahead[0] if ahead else None,
                                        query_embedding), name
    window = time_window(query, now)
    engine = sidearms.side_engine(session, own_only) if "exchange" in kinds else None
    others = tuple(kind for kind in kinds if kind != "exchange")
    side = None if engine is None else sidearms.ExchangeArms(engine, sidearms.side_pool(), user_id, window, cfg, others)
    if side is not None and ahead is not None and ahead[1] == name:
        side.follow(ahead[0])  # the arms start the moment the vector they search by is there
    excluded = set(exclude_exchange_ids)
    try:
        terms, lexical, qvec, speaker = _terms_and_vectors(session, user_id, query, cfg, kinds, ahead, embedder,
                                                           query_embedding, name, side, vocabulary_size)
        candidates = []
        if "exchange" in kinds:
            candidates += spans.gather(session, user_id, terms, qvec, window, cfg, excluded, speaker, lexical,
                                       side.ids() if side is not None else None,
                                       side.speaker_ids() if side is not None and speaker is not None else None)
        candidates += _other_candidates(session, side, others, user_id, qvec, terms.terms, window, cfg)
    finally:
        if side is not None:
            side.release()  # its connection no longer waits for terms that will not come
    # A question about the person at large (turnshape.asks_broadly) leans on that person's own account (focus.py).
    broad = speaker is not None and turnshape.asks_broadly(query)
    # Whose words the question asks for: that person's account in the first person, or, naming several speakers,
    # its subject (focus.py); only where the names were read (by_speaker), as measured.
    asked_about = focus.of_question(query, speaker.name if speaker else None, broad, cfg) if by_speaker else None
    scored = score_candidates(candidates, cfg, qvec is not None, window, now, turnshape.answer_cue(query),
                              cfg.speaker_weight, asked_about)
    hits = _select(session, user_id, scored, k, cfg, excluded)
    if reinforce and hits:
        ids: dict[str, list[int]] = {}
        for hit in hits:
            ids.setdefault(hit.kind, []).append(hit.id)
        access.reinforce(session, user_id, ids, now)
    return hits


def _open(session: Session, user_id: str, kinds: tuple[str, ...], cfg: RecallConfig,
          words: list[str]) -> tuple[tuple[str, ...], str | None, bool, int | None]:
    """The search settings (``search.prepare_vector_search``; the full-text arms need its plan setting too),
    and in the same statement the kinds besides exchanges that this user holds any row of, the speaker the
    query's ``words`` name and whether every arm must stay on this connection (``sidearms``): one round trip
    where there were up to four, asked afresh by every recall; and the user's vocabulary size when the query is
    expanded (``vocabmatrix``)."""
    others = [kind for kind in kinds if kind != "exchange"]
    columns = [search.holds_sql(kind) for kind in others] + [sidearms.OWN_CONNECTION_SQL]
    columns.append(vocabmatrix.SIZE_SQL if cfg.expands else "NULL")
    columns.append(speakers.SPEAKER_WORDS_SQL if words else "NULL")
    row = session.execute(search.statement(f"SELECT {search.SEARCH_SETTINGS_SQL}, {', '.join(columns)}"),
                          {**search.search_settings(cfg), "user": user_id, "words": words}).one()
    held = dict(zip(others, row[search.SEARCH_SETTINGS_COLUMNS:][:len(others)], strict=True))
    named = row[-1] or []
    if words:
        speakers.GUESSES.learn(user_id, words, named)
    kept = tuple(kind for kind in kinds if kind == "exchange" or held[kind])
    return kept, speakers.the_one(named), row[-3], row[-2]


# (the embedding under way, the speaker name it was started for)
Ahead = tuple[Future[tuple[np.ndarray, speakers.NamedSpeaker | None]], str | None]


def _embed_ahead(embedder: Embedder | None, user_id: str, query: str, query_embedding: np.ndarray | None,
                 words: list[str]) -> Ahead | None:
    """Start the query's embedding on a worker thread, for the speaker its words named last time."""
    if embedder is None:
        return None
    guess = speakers.GUESSES.guess(user_id, words) if words else None
    if query_embedding is not None and guess is None:
        return None  # nothing to embed unless the query names someone, which _open will tell
    return sidearms.side_pool().submit(speakers.query_vectors, embedder, query, query_embedding, guess), guess


def _terms_and_vectors(session: Session, user_id: str, query: str, cfg: RecallConfig, kinds: tuple[str, ...],
                       ahead: Ahead | None, embedder: Embedder | None, query_embedding: np.ndarray | None,
                       name: str | None, side: sidearms.ExchangeArms | None = None,
                       vocabulary_size: int | None = None,
                       ) -> tuple[LineTerms, list[int] | None, np.ndarray | None, speakers.NamedSpeaker | None]:
    """The query's terms (one set, weighted by this user's turns, serves every kind), the BM25 arm's lines
    when they were fetched on their own, the search vector and the named speaker. ``side``: the exchange arms,
    started on a second connection as soon as the vector is there, handed the terms for the other kinds."""
    lexical = None
    if embedder is not None and cfg.expands:
        # The person's own words nearest the question (without a name it names) join its terms. While the model
        # still embeds, the asked words are counted meanwhile and only the expansion's kNN and counts wait for
        # it (one statement more, off the wall time); otherwise all in one statement.
        asked = asked_terms(session, user_id, query, cfg) if ahead is not None and not ahead[0].done() else None
        if asked is not None and not ahead[0].done():  # the wait for the model, put to use (vocabmatrix)
            vocabmatrix.MATRICES.warm(session, user_id, vocabulary_size, asked.kept.read_at if asked.kept else 0.0)
        if asked is not None and not ahead[0].done():  # and for every count of the sample, once (lineterms)
            count_sample(session, user_id, asked, cfg)
        qvec, speaker = _query_vectors(ahead, embedder, query, query_embedding, name)
        if side is not None:
            side.start(qvec)
        expand_by = speaker.vector if speaker is not None else qvec
        if asked is not None:
            terms = expanded_terms(session, user_id, asked, cfg, expand_by, vocabulary_size)
        else:
            terms = line_terms(session, user_id, query, cfg, expand_by, vocabulary_size)
        if side is not None:
            side.hand_terms(terms.terms)
    else:
        terms = line_terms(session, user_id, query, cfg)
        if side is not None:
            side.hand_terms(terms.terms)
        # While the model still runs, the BM25 arm (it needs no vector) runs on its own: one statement more, off
        # the wall time. Without an embedding under way it stays inside window_rows' statement (one round trip).
        if ahead is not None and not ahead[0].done() and "exchange" in kinds:
            lexical = turns.lexical_lines(session, user_id, terms, cfg.line_candidates, cfg)
        qvec, speaker = _query_vectors(ahead, embedder, query, query_embedding, name)
        if side is not None:
            side.start(qvec)
    if lexical is None and side is not None and side.running() and "exchange" in kinds:
        # Likewise while the exchange arms still run on the second connection.
        lexical = turns.lexical_lines(session, user_id, terms, cfg.line_candidates, cfg)
    return terms, lexical, qvec, speaker


def _query_vectors(ahead: Ahead | None, embedder: Embedder | None, query: str, query_embedding: np.ndarray | None,
                   name: str | None) -> tuple[np.ndarray | None, speakers.NamedSpeaker | None]:
    """The search vector and the named speaker: the embedding started ahead when it was started for the
    speaker ``_open`` found, else embedded now (what a recall computed before it embedded ahead)."""
    if embedder is None:
        return query_embedding, None
    if ahead is not None:
        future, guess = ahead
        vectors = future.result()
        if guess == name:
            return vectors
    return speakers.query_vectors(embedder, query, query_embedding, name)


def _other_candidates(session: Session, side: sidearms.ExchangeArms | None, others: tuple[str, ...], user_id: str,
                      qvec: np.ndarray | None, terms: search.Terms, window: Window | None,
                      cfg: RecallConfig) -> list[Candidate]:
    """The fact and episode candidates: gathered on the second connection while window_rows ran here, or (no
    second connection, or it failed) here now."""
    found = side.other_candidates() if side is not None else None
    if found is not None:
        return found
    return [c for kind in others for c in _gather(session, kind, user_id, qvec, terms, window, cfg)]


def _gather(session: Session, kind: str, user_id: str, qvec: np.ndarray | None, terms: search.Terms,
            window: Window | None, cfg: RecallConfig) -> list[Candidate]:
    return search.kind_candidates(session, kind, user_id, qvec, terms, window, cfg.candidates, cfg)


def _select(session: Session, user_id: str, scored: Scored, k: int,
            cfg: RecallConfig, excluded: set[int]) -> list[RecallHit]:
    """Top ``k`` hits; a turn already returned in another hit does not take a slot (or a turn) again."""
    picker = spans.SpanPicker(cfg, excluded)
    hits: list[RecallHit] = []
    for score, signals, candidate in scored:
        if candidate.kind == "exchange":
            lines = picker.take(candidate)
            if not lines:
                continue
            hit = _span_hit(candidate, score, signals, lines)
        else:
            hit = _hit(candidate, score, signals)
        hits.append(hit)
        if len(hits) == k:
            break
    sources = [i for hit in hits if hit.kind != "exchange" for i in hit.exchange_ids]
    known = turns.lines_by_exchange(session, user_id, sources)
    # The returned exchanges' own texts and places, read for these few (window_rows reads them for none).
    about = turns.exchange_texts(session, user_id, [hit.id for hit in hits if hit.kind == "exchange"])
    for hit in hits:
        if hit.kind != "exchange":
            hit.lines = [line for i in hit.exchange_ids for line in known.get(i, [])]
            hit.external_ids = [line["external_id"] for line in hit.lines if line["external_id"]]
        else:
            hit.meta = {**about[hit.id], **hit.meta}
    return hits


def _span_hit(candidate: Candidate, score: float, signals: dict[str, float],
              lines: list[dict[str, Any]]) -> RecallHit:
    """An exchange hit: the turns that answer."""
    row = candidate.row
    exchange_ids = [candidate.id] + [i for i in dict.fromkeys(line["exchange_id"] for line in lines)
                                     if i != candidate.id]
    meta = {"line_id": row["id"]}  # its exchange's thread, session and texts come first (_select)
    return RecallHit(turns.render(lines), "exchange", round(score, 5), signals, exchange_ids,
                     [line["external_id"] for line in lines if line["external_id"]], candidate.id, candidate.at,
                     meta, lines)


def _hit(candidate: Candidate, score: float, signals: dict[str, float]) -> RecallHit:
    row = candidate.row
    if candidate.kind == "fact":
        meta = {"confidence": row["confidence"], "created_at": row["created_at"]}
        return RecallHit(row["text"], "fact", round(score, 5), signals, list(row["exchange_ids"] or []), [],
                         candidate.id, candidate.at, meta)
    text = f"{row['title']}: {row['gist']}" if row["gist"] else row["title"]
    meta = {"summary": row["summary"], "outcome": row["outcome"], "open_loops": row["open_loops"],
            "started_at": row["started_at"], "session_id": row["session_id"]}
    return RecallHit(text, "episode", round(score, 5), signals, list(row["exchange_ids"] or []), [], candidate.id,
                     candidate.at, meta)
