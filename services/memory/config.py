"""Typed memory settings from ``configs/memory.toml`` (recall weights, budgets, waits, thresholds)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.config_files import parse_sections, read_toml
from services.settings import SettingsError

FUSIONS = ("absolute", "minmax", "rrf")
SPAN_MODES = ("always", "matching", "unmatched", "never")


@dataclass(frozen=True)
class RecallConfig:
    fusion: str = "absolute"
    vector_weight: float = 0.5
    lexical_weight: float = 0.5
    rrf_k: int = 60
    sim_floor: float = 0.15
    sim_ceil: float = 0.75
    candidates: int = 25  # rows each exchange arm brings (configs/memory.toml: measured depth)
    ef_search: int = 100
    max_df_ratio: float = 0.25
    df_cap: int = 1000
    match_cap: int = 1000
    common_match_cap: int = 300  # match_cap when every asked word is at df_cap (configs/memory.toml)
    min_docs_for_df: int = 100
    max_query_terms: int = 32  # a long message scores by its longest lexemes only (one df count each)
    window_relevance: float = 0.2
    recency_half_life_days: float = 30.0
    recency_weight: float = 0.10
    past_recency_weight: float = 0.0  # recency_weight for a question about the past (turnshape.asks_about_past)
    salience_weight: float = 0.10
    access_weight: float = 0.05
    access_saturation: int = 20
    time_match_weight: float = 1.0
    neighbours: int = 0  # > 0: a hit is its whole exchange with this many exchanges around it (not a span)
    line_candidates: int = 60  # lines the BM25 arm brings
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    length_sample: int = 2000  # lines sampled for the average line length
    reply_context_weight: float = 0.5  # share of the replied-to line's BM25 added to a line's own
    nearby_weight: float = 0.5  # share of the best BM25 within context_window lines added
    context_window: int = 2
    context_sim_weight: float = 0.5  # share of a line's similarity taken from the mean over context_window lines
    # "always" | "matching" | "unmatched" | "never": when a line hit comes with the line it replies to
    span_replied_to: str = "unmatched"
    rewrite_query: bool = True  # drop question scaffolding ("what kind of", "mention") before matching
    speaker_weight: float = 0.3  # relevance added by a named speaker's turn's similarity (0 = no speaker arm)
    speaker_candidates: int = 10  # turns of the named speaker the speaker arm brings
    expansion_weight: float = 0.3  # an expansion word's BM25 weight: this × its cosine to the query × its IDF
    expansion_words: int = 10  # the person's words nearest the query considered (0 = no expansion)
    expansion_min_similarity: float = 0.35  # ... at this cosine or more

    @property
    def expands(self) -> bool:
        """Whether queries are expanded by the person's vocabulary (so it is worth filling)."""
        return self.expansion_words > 0 and self.expansion_weight > 0
    speaker_weight_broad: float = 0.5  # its weight when the question asks about the person at large
    first_person_boost: float = 0.3  # ... and naming no particular thing: their first-person turns × (1 + this)
    event_boost: float = 0.15  # ... and their turns telling a time (an event) × (1 + this) (focus.py)
    subject_boost: float = 0.4  # a question naming several speakers: its subject's turns × (1 + this) (focus.py)
    question_turn_weight: float = 0.5  # a turn's score × (1 − this × share of its sentences that are questions)
    answer_cue_weight: float = 0.1  # relevance added to a turn holding the time/number/place a query asks for
    kind_weights: dict[str, float] = field(default_factory=lambda: {"exchange": 1.0, "fact": 1.0, "episode": 1.0})

    @property
    def decay_per_day(self) -> float:
        """λ of exp(−λ·Δt) with Δt in days."""
        return math.log(2) / self.recency_half_life_days


@dataclass(frozen=True)
class ContextConfig:
    budget_tokens: int = 900
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
    merge_similarity: float = 0.92
    max_chars: int = 500
    multi_valued_predicates: tuple[str, ...] = (
        "like", "love", "enjoy", "hate", "dislike", "have", "own", "know", "visit", "speak", "play", "read",
        "watch", "want", "need", "friend", "collect",
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
    data = read_toml(Path(configs_dir) / "memory.toml") if configs_dir is not None else None
    if data is None:
        return MemoryConfig()
    config = parse_sections("memory.toml", MemoryConfig(), data)
    validate(config)
    return config


def process_memory_config(extras: dict[str, Any], configs_dir: Path | None) -> MemoryConfig:
    """``memory.toml``, read once per process and kept in a worker context's ``extras``."""
    if "memory_config" not in extras:
        extras["memory_config"] = load_memory_config(configs_dir)
    return extras["memory_config"]


def validate(config: MemoryConfig) -> None:
    """Refuse values that would make recall or the workers misbehave."""
    recall = config.recall
    if recall.fusion not in FUSIONS:
        raise SettingsError(f"memory.toml: [recall] fusion must be one of {FUSIONS}")
    if not 0 <= recall.sim_floor < recall.sim_ceil <= 1:
        raise SettingsError("memory.toml: [recall] needs 0 <= sim_floor < sim_ceil <= 1")
    if (recall.recency_half_life_days <= 0 or recall.past_recency_weight < 0 or recall.candidates < 1
            or recall.neighbours < 0):
        raise SettingsError("memory.toml: [recall] needs recency_half_life_days > 0, past_recency_weight >= 0, "
                            "candidates >= 1, neighbours >= 0")
    if recall.line_candidates < 1 or recall.bm25_k1 < 0 or not 0 <= recall.bm25_b <= 1:
        raise SettingsError("memory.toml: [recall] needs line_candidates >= 1, bm25_k1 >= 0, 0 <= bm25_b <= 1")
    if recall.span_replied_to not in SPAN_MODES or recall.context_window < 0:
        raise SettingsError('memory.toml: [recall] span_replied_to is "always", "matching", "unmatched" or "never"; '
                            "context_window >= 0")
    if min(recall.max_query_terms, recall.df_cap, recall.match_cap, recall.common_match_cap) < 1:
        raise SettingsError("memory.toml: [recall] needs max_query_terms, df_cap, match_cap and common_match_cap >= 1")
    if (recall.speaker_weight < 0 or recall.speaker_candidates < 0 or recall.speaker_weight_broad < 0
            or min(recall.first_person_boost, recall.event_boost, recall.subject_boost) < 0):
        raise SettingsError("memory.toml: [recall] needs speaker_weight >= 0, speaker_weight_broad >= 0, "
                            "first_person_boost, event_boost and subject_boost >= 0 and speaker_candidates >= 0")
    if recall.expansion_weight < 0 or recall.expansion_words < 0 or not 0 <= recall.expansion_min_similarity <= 1:
        raise SettingsError("memory.toml: [recall] needs expansion_weight >= 0, expansion_words >= 0 and "
                            "0 <= expansion_min_similarity <= 1")
    if not 0 <= recall.context_sim_weight <= 1:
        raise SettingsError("memory.toml: [recall] needs 0 <= context_sim_weight <= 1")
    if not 0 <= recall.question_turn_weight <= 1 or recall.answer_cue_weight < 0:
        raise SettingsError("memory.toml: [recall] needs 0 <= question_turn_weight <= 1 and answer_cue_weight >= 0")
    if not 0 < config.facts.merge_similarity <= 1:
        raise SettingsError("memory.toml: [facts] merge_similarity must be in (0, 1]")
    if config.context.budget_tokens < 50 or not config.episodic.backoff_s:
        raise SettingsError("memory.toml: [context] budget_tokens >= 50 and [episodic] backoff_s non-empty")
