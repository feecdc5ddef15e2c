"""``python -m bench.recall locomo``: evidence recall of memory on long, real multi-session conversations.

Run from the repository root:  python -m bench.recall locomo [--data DIR] [--k 20] [--set key=value ...]

Data: LoCoMo (Maharana et al., ACL 2024, snap-research/locomo, CC BY-NC 4.0), read from
``../shared/data/locomo-dev/`` beside the repository (never copied into it); without that folder
the bench says so and exits 0. Each conversation is imported as its own user through the real
import path (``engram import --no-enrich``: parse_lines → pair_exchanges → store_records, then the
vector backfill run to completion, ``services/memory/vectors.fill_all``, then each person's
vocabulary, ``vocabulary.fill_all``) into a throwaway PostgreSQL; every question with evidence is
asked through ``recall()`` (query embedding included in the latency), and the turns a prompt would
get are counted: each result's turns in order, only the ids it lists, so a wider result cannot buy
recall. Evidence recall within the first 5/10/20 turns is the share of a question's evidence turns
found there, averaged.

The naive baselines are computed here on the same data: plain BM25 (k1 1.2, b 0.75, PostgreSQL's
English analyser) over single turns, plain vector search (the same MiniLM) over single turns, and
z-score fusion of the two.

How to read it: the first row is Engram with the defaults of configs/memory.toml; the baselines below it are
the same data ranked naively. A change is worth keeping only if it shows in most of the five conversations (the
"by conversation" line), not in one. ``--ablate`` switches each recall signal off alone and prints what it earns.
The rounds of tuning, with every figure, are in bench/RESULTS.md.

``--enrich MODE``: after the figures above, each imported conversation is enriched as the workers do under the
compact profile (from the words, no model call): every exchange gets its chunk (``store_chunk``, its facts through
``remember_fact``, merging and superseding as live facts do) and every session its episode built from the chunks'
gists (``fallback_episode`` → ``store_episode``); then the same questions are asked again, facts and episodes
among the candidates. Two ways to read a turn: ``as-imported``, ``chunk_from_words(exchange.user_text)``, the
exchange's first speaker's words said of "the user" (the chunker before it read named lines); ``by-speaker``,
``chunk_from_lines``, each named person's own lines, their facts named for them ("Caroline went to a support
group"): LoCoMo's two speakers are both people, neither is the account's owner. Counting stays "what a prompt
gets": a fact or an episode takes one slot, the one turn of its source its text was made from (the best word
overlap), never its whole exchange or session. It prints the enrichment's cost per exchange and the rows it made.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from bench.recall import database, latency_line
from bench.recall.locomo_data import ROOT, Question, corpora, find_data, load, query_lexemes, rankings
from services.db import ConversationSession, Exchange
from services.embeddings import BACKEND_NAMES, Embedder, for_requests, load_embedder
from services.memory import turns
from services.memory.chunks import store_chunk
from services.memory.config import MemoryConfig, RecallConfig
from services.memory.episodes import chunks_for, fallback_episode, store_episode
from services.memory.from_words import chunk_from_lines, chunk_from_words
from services.memory.recall import RecallHit, recall
from services.text import content_words

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
WIDTHS = (5, 10, 20)
MODES = ("as-imported", "by-speaker")  # --enrich: how a turn is read (the module's docstring)
MODEL = "words"  # the model name enrichment from words stores


@dataclass
class Tally:
    """Evidence recall per width, overall and by category, for one ranking."""

    name: str
    by_width: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_user: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    all_returned: list[float] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    results: list[int] = field(default_factory=list)

    def add(self, question: Question, ranked: list[list[str | None]]) -> None:
        """``ranked``: each result's turns in order (None for a turn without an id)."""
        flat = [turn for result in ranked for turn in result]
        for width in WIDTHS:
            self.by_width[width].append(len(question.evidence & set(flat[:width])) / len(question.evidence))
        self.by_category[question.category].append(len(question.evidence & set(flat[:20])) / len(question.evidence))
        self.by_user[question.user].append((self.by_width[10][-1], self.by_width[20][-1]))
        self.all_returned.append(len(question.evidence & set(flat)) / len(question.evidence))
        self.turns.append(len(flat))
        self.results.append(len(ranked))

    def row(self) -> str:
        widths = "  ".join(f"{np.mean(self.by_width[w]):.3f}" for w in WIDTHS)
        per_result = sum(self.turns) / max(1, sum(self.results))
        return (f"{self.name:<34} {widths}   {np.mean(self.all_returned):.3f} at {np.mean(self.turns):.1f} turns"
                f"  ({per_result:.2f} turns/result)")

    def conversations(self) -> str:
        """Recall within 10 / 20 turns per conversation: a gain should show in most of them, not in one."""
        means = {user: np.mean(pairs, axis=0) for user, pairs in sorted(self.by_user.items())}
        return "  ".join(f"{user.removeprefix('locomo-')} {at10:.3f}/{at20:.3f}"
                         for user, (at10, at20) in means.items())

    def categories(self) -> str:
        return "  ".join(f"{c} {CATEGORIES[c]} {np.mean(v):.3f} (n={len(v)})"
                         for c, v in sorted(self.by_category.items()))


@dataclass
class Cost:
    exchanges: int = 0
    chunk_s: float = 0.0
    episode_s: float = 0.0
    rows: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        count = max(1, self.exchanges)
        made = ", ".join(f"{number} {name}" for name, number in sorted(self.rows.items()))
        return (f"enrichment: {self.exchanges} exchanges, {1000 * (self.chunk_s + self.episode_s) / count:.1f} ms an "
                f"exchange (chunks and facts {1000 * self.chunk_s / count:.1f} ms, episodes "
                f"{1000 * self.episode_s / count:.1f} ms); rows: {made}")


def enrich(sessions: sessionmaker[Session], embedder: Embedder, users: list[str], mode: str,
           config: MemoryConfig) -> Cost:
    """Chunks, facts and episodes from words for every exchange of ``users``; what it cost."""
    cost = Cost()
    for user in users:
        with sessions() as session:
            ids = list(session.scalars(select(Exchange.id).where(Exchange.user_id == user)
                                       .order_by(Exchange.occurred_at, Exchange.id)))
            lines = turns.lines_by_exchange(session, user, ids)
        for exchange_id in ids:
            started = time.perf_counter()
            with sessions.begin() as session:
                exchange = session.get(Exchange, exchange_id)
                assert exchange is not None
                chunk = (chunk_from_words(exchange.user_text) if mode == "as-imported" else
                         chunk_from_lines([(line["speaker"], line["text"]) for line in lines.get(exchange_id, [])]))
                stored = store_chunk(session, embedder, exchange, chunk, model=MODEL, facts_config=config.facts)
            cost.chunk_s += time.perf_counter() - started
            cost.exchanges += 1
            cost.rows["chunks"] += 1
            for result in stored.facts if stored else []:
                cost.rows[f"facts {result.action}"] += 1
        started = time.perf_counter()
        with sessions.begin() as session:
            for conversation in session.scalars(select(ConversationSession)
                                                .where(ConversationSession.user_id == user)):
                exchanges = list(session.scalars(select(Exchange).where(Exchange.session_id == conversation.id)
                                                 .order_by(Exchange.occurred_at, Exchange.id)))
                if not exchanges:
                    continue
                episode = fallback_episode(conversation.topic, exchanges,
                                           chunks_for(session, [e.id for e in exchanges]))
                if store_episode(session, embedder, conversation, episode, exchanges, model=MODEL) is not None:
                    cost.rows["episodes"] += 1
        cost.episode_s += time.perf_counter() - started
    return cost


def slots(hit: RecallHit) -> list[str | None]:
    """The turns a hit puts in a prompt: an exchange hit its own; a fact or an episode the one turn of its source
    its text was made from (the best word overlap; none when its source has no lines)."""
    if hit.kind == "exchange":
        return [line["external_id"] for line in hit.lines]
    said = set(content_words(hit.text))
    best: dict[str, Any] | None = max(hit.lines, key=lambda line: len(said & set(content_words(line["text"]))),
                                      default=None)
    return [best["external_id"]] if best is not None else []


def ask(sessions: sessionmaker[Session], embedder: Embedder, questions: list[Question], config: MemoryConfig,
        k: int, name: str) -> tuple[Tally, list[float]]:
    tally, latencies = Tally(name), []
    with sessions() as session:
        for question in questions:
            started = time.perf_counter()
            hits = recall(session, embedder, question.user, question.text, k=k, config=config, now=question.now,
                          reinforce=False)
            latencies.append((time.perf_counter() - started) * 1000)
            tally.add(question, [slots(hit) for hit in hits])
    return tally, latencies


def baselines(sessions: sessionmaker[Session], embedder: Embedder, questions: list[Question]) -> list[Tally]:
    found = corpora(sessions, embedder, sorted({q.user for q in questions}))
    tallies: dict[str, Tally] = {}
    with sessions() as session:
        for question in questions:
            ranked = rankings(found[question.user], query_lexemes(session, question.text),
                              for_requests(embedder).embed(question.text))
            for name, ids in ranked.items():
                tallies.setdefault(name, Tally(name)).add(question, [[turn] for turn in ids])
    return list(tallies.values())


def overrides(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs as typed RecallConfig fields."""
    types = {f.name: type(getattr(RecallConfig(), f.name)) for f in fields(RecallConfig)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in types:
            raise SystemExit(f"unknown [recall] key {key!r}")
        kind = types[key]
        changes[key] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
    return changes


# Each recall signal or boost switched off alone (``--ablate``): what it earns on this data.
ABLATIONS: dict[str, dict[str, Any]] = {
    "speaker arm": {"speaker_weight": 0.0},
    "first_person_boost": {"first_person_boost": 0.0},
    "subject_boost": {"subject_boost": 0.0},
    "expansion": {"expansion_words": 0},
    "question_turn_weight": {"question_turn_weight": 0.0},
    "answer_cue_weight": {"answer_cue_weight": 0.0},
    "context_sim_weight": {"context_sim_weight": 0.0},
    "reply_context_weight": {"reply_context_weight": 0.0},
    "nearby_weight": {"nearby_weight": 0.0},
    "recency": {"recency_weight": 0.0},
    "salience": {"salience_weight": 0.0},
    "time window": {"time_match_weight": 0.0, "window_relevance": 0.0},
    "rewrite_query": {"rewrite_query": False},
    "span always": {"span_replied_to": "always"},
}


def ablate(sessions: sessionmaker[Session], embedder: Embedder, questions: list[Question], base: MemoryConfig,
           k: int) -> None:
    """The defaults, then each of ABLATIONS alone: Δ within 10 and 20 turns against the defaults."""
    tally, _ = ask(sessions, embedder, questions, base, k, "defaults")
    ref = (np.mean(tally.by_width[10]), np.mean(tally.by_width[20]))
    print(f"{'defaults':<28} @10 {ref[0]:.4f}  @20 {ref[1]:.4f}", flush=True)
    for name, change in ABLATIONS.items():
        config = replace(base, recall=replace(base.recall, **change))
        tally, _ = ask(sessions, embedder, questions, config, k, name)
        at10, at20 = np.mean(tally.by_width[10]), np.mean(tally.by_width[20])
        print(f"{name:<28} @10 {at10:.4f} ({at10 - ref[0]:+.4f})  @20 {at20:.4f} ({at20 - ref[1]:+.4f})", flush=True)


def compare_enriched(sessions: sessionmaker[Session], embedder: Embedder, questions: list[Question],
                     config: MemoryConfig, k: int, mode: str, before: Tally) -> None:
    """The same questions after enrichment from words (facts and episodes join the candidates)."""
    cost = enrich(sessions, embedder, sorted({q.user for q in questions}), mode, config)
    with sessions.begin() as session:
        session.execute(text("ANALYZE"))
    print(f"\n{cost.line()}")
    after, latencies = ask(sessions, embedder, questions, config, k, f"Engram enriched ({mode})")
    print(f"\n{'evidence recall within first N turns':<34} {'@5':>5}  {'@10':>5}  {'@20':>5}   all returned")
    print(before.row())
    print(after.row())
    print(f"\nby category within 20 turns, without: {before.categories()}")
    print(f"by category within 20 turns, with:    {after.categories()}")
    print(f"by conversation within 10/20 turns, with: {after.conversations()}")
    print(f"recall latency enriched: {latency_line(latencies)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recall locomo", description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder of LoCoMo conversation files (default ../shared/data/locomo-dev)")
    parser.add_argument("--k", type=int, default=20, help="results asked per question")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a [recall] setting of configs/memory.toml (repeatable)")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument("--embedder", default="auto", choices=BACKEND_NAMES)
    parser.add_argument("--pgdata", help="keep the database here between runs (default: a temp dir)")
    parser.add_argument("--ablate", action="store_true", help="each recall signal off alone, against the defaults")
    parser.add_argument("--enrich", choices=MODES, help="then enrich from words and ask again")
    args = parser.parse_args(argv)
    folder = find_data(args.data)
    if folder is None:
        print(f"bench.recall locomo: no LoCoMo data found ({args.data or '../shared/data/locomo-dev'}); skipped")
        return
    from services.memory.config import load_memory_config

    base = load_memory_config(ROOT / "configs")
    config = replace(base, recall=replace(base.recall, **overrides(args.set)))
    embedder = load_embedder(args.embedder, cache_size=0)
    with database(args.pgdata) as (_, sessions):
        questions, rate, vector_rate = load(sessions, embedder, folder)
        with sessions.begin() as session:
            session.execute(text("ANALYZE"))
        imported = (f"import {rate:.0f} exchanges/s stored, then vectors {vector_rate:.0f} exchanges/s"
                    if rate else "already imported (--pgdata)")
        print(f"LoCoMo ({folder}): {len(questions)} questions with evidence; {imported}; "
              f"embedder {embedder.model_id}, questions {for_requests(embedder).model_id}")
        if args.ablate:
            ablate(sessions, embedder, questions, config, args.k)
            return
        tally, latencies = ask(sessions, embedder, questions, config, args.k, f"Engram (k={args.k})")
        rows = [tally] + ([] if args.no_baselines else baselines(sessions, embedder, questions))
        print(f"\n{'evidence recall within first N turns':<34} {'@5':>5}  {'@10':>5}  {'@20':>5}   all returned")
        for item in rows:
            print(item.row())
        print(f"\nby category within 20 turns: {tally.categories()}")
        print(f"by conversation within 10/20 turns: {tally.conversations()}")
        print(f"recall latency (query embedding included): {latency_line(latencies)}")
        if args.enrich:
            compare_enriched(sessions, embedder, questions, config, args.k, args.enrich, tally)

if __name__ == "__main__":
    main()
