"""Typed memory settings from ``configs/memory.toml`` (recall weights, budgets, waits, thresholds)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.config_files import at_least, checked, load_config, once_per_process, one_of, positive, within

SPAN_MODES = ("always", "unmatched")


@dataclass(frozen=True)
class RecallConfig:
    """``[recall]``: every key is explained, with what it earned, in ``configs/memory.toml``."""

    vector_weight: float = 0.5
    lexical_weight: float = 0.5
    sim_floor: float = within(0.15, 0, 1)
    sim_ceil: float = within(0.75, 0, 1)
    candidates: int = at_least(25, 1)  # rows each exchange arm brings (configs/memory.toml: measured depth)
    ef_search: int = 100
    exact_lines: int = at_least(10_000, 0)  # a person with at most this many turns: exact vector search (0 = never)
    own_index_vectors: int = at_least(5_000, 0)  # past exact_lines, and this many vectors: an HNSW index of their own
    df_cap: int = at_least(1000, 1)
    match_cap: int = at_least(1000, 1)
    common_match_cap: int = at_least(300, 1)  # match_cap when every asked word is at df_cap (configs/memory.toml)
    max_query_terms: int = at_least(32, 1)  # a long message scores by its longest lexemes only (one df count each)
    window_relevance: float = 0.2
    recency_half_life_days: float = positive(30.0)
    recency_weight: float = 0.10
    salience_weight: float = 0.10
    access_weight: float = 0.05
    access_saturation: int = 20
    time_match_weight: float = 1.0
    line_candidates: int = at_least(60, 1)  # lines the BM25 arm brings
    bm25_k1: float = at_least(1.2, 0)
    bm25_b: float = within(0.75, 0, 1)
    length_sample: int = 2000  # lines sampled for the average line length
    reply_context_weight: float = 0.5  # share of the replied-to line's BM25 added to a line's own
    nearby_weight: float = 0.5  # share of the best BM25 within context_window lines added
    context_window: int = at_least(2, 0)
    context_sim_weight: float = within(0.5, 0, 1)
    # "always" | "unmatched": when a line hit comes with the line it replies to
    span_replied_to: str = one_of("unmatched", SPAN_MODES)
    rewrite_query: bool = True  # drop question scaffolding ("what kind of", "mention") before matching
    speaker_weight: float = at_least(0.3, 0)
    speaker_candidates: int = at_least(10, 0)  # turns of the named speaker the speaker arm brings
    unsaid_weight: float = within(0.5, 0, 1)  # a word none of the person's turns holds, against a fact lacking it
    expansion_weight: float = at_least(0.3, 0)
    expansion_words: int = at_least(10, 0)  # the person's words nearest the query considered (0 = no expansion)
    expansion_min_similarity: float = within(0.35, 0, 1)  # ... at this cosine or more

    @property
    def expands(self) -> bool:
        """Whether queries are expanded by the person's vocabulary (so it is worth filling)."""
        return self.expansion_words > 0 and self.expansion_weight > 0
    first_person_boost: float = at_least(0.3, 0)
    subject_boost: float = at_least(0.4, 0)
    question_turn_weight: float = within(0.5, 0, 1)
    answer_cue_weight: float = at_least(0.1, 0)

    @property
    def decay_per_day(self) -> float:
        """λ of exp(−λ·Δt) with Δt in days."""
        return math.log(2) / self.recency_half_life_days


@dataclass(frozen=True)
class ContextConfig:
    budget_tokens: int = at_least(900, 50)
    chars_per_token: float = 4.0
    min_relevance: float = 0.25
    max_facts: int = 8
    max_episodes: int = 3
    max_exchanges: int = 8
    profile_facts: int = 4
    profile_min_salience: float = 0.7
    narrative_chars: int = 600
    shared_thoughts: int = 2
    shared_thoughts_days: float = 3.0
    reminders: int = 4
    lists: int = 3
    refusals: int = 4
    answer_form: int = 4
    known_again: int = 2


@dataclass(frozen=True)
class ChunkerConfig:
    context_exchanges: int = 2
    known_facts: int = 8
    retry_backoff_s: tuple[int, ...] = (30, 120, 600)
    send_schema: bool = True


@dataclass(frozen=True)
class EpisodicConfig:
    deadline_s: float = 600.0
    backoff_s: tuple[int, ...] = (5, 15, 30, 60, 120, 240)
    max_exchanges: int = 40
    send_schema: bool = True


@dataclass(frozen=True)
class FactsConfig:
    merge_similarity: float = checked(0.92, "within (0, 1]", lambda value: 0 < value <= 1)
    max_chars: int = 500
    multi_valued_predicates: tuple[str, ...] = (
        "like", "love", "enjoy", "hate", "dislike", "have", "own", "know", "visit", "speak", "play", "read",
        "watch", "want", "need", "friend", "collect", "get", "got",
    )  # fmt: skip
    # Predicates that answer one question (where the person lives, what they do for a living): facts with
    # any of a slot's predicates share one key, so "teaches at a school" supersedes "works at a bank".
    slots: dict[str, list[str]] = field(default_factory=lambda: {
        "home": ["live", "live in", "live at", "move to", "moved to", "relocate to", "relocated to"],
        "work": ["work", "work at", "work as", "work for", "work in", "teach", "teach at", "teach in"],
    })


@dataclass(frozen=True)
class MemoryConfig:
    recall: RecallConfig = field(default_factory=RecallConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    chunker: ChunkerConfig = field(default_factory=ChunkerConfig)
    episodic: EpisodicConfig = field(default_factory=EpisodicConfig)
    facts: FactsConfig = field(default_factory=FactsConfig)


def load_memory_config(configs_dir: Path | None) -> MemoryConfig:
    """Read ``memory.toml`` from ``configs_dir`` (missing file or None → defaults); unknown keys are errors."""
    return load_config(configs_dir, "memory.toml", MemoryConfig(), _rules)


def process_memory_config(extras: dict[str, Any], configs_dir: Path | None) -> MemoryConfig:
    """``memory.toml``, read once per process and kept in a worker context's ``extras``."""
    return once_per_process(extras, "memory_config", lambda: load_memory_config(configs_dir))


def _rules(config: MemoryConfig) -> list[tuple[bool, str]]:
    return [(config.recall.sim_floor >= config.recall.sim_ceil, "[recall] needs sim_floor < sim_ceil"),
            (not config.episodic.backoff_s, "[episodic] backoff_s must not be empty")]
