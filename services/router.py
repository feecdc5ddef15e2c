"""Deterministic mode router: signals → per-mode linear scores → decision, no LLM call.

Weights come from ``configs/router.toml``; ``configs/generated/router_weights.json`` (written
only by the routing stability regulator) overrides any key it holds and is picked up on the
next ``route`` call after it changes. Exemplar sentences per mode live in
``configs/router_exemplars.toml`` and are embedded once, when the router is built.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import os
import re
import time
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from services.config_files import parse_sections, read_toml
from services.embeddings import Embedder
from services.router_signals import MODES, RoutingContext, collect_signals, text_view
from services.settings import SettingsError

__all__ = [
    "MODES",
    "ModeRouter",
    "RouterConfig",
    "RoutingContext",
    "RoutingDecision",
    "apply_tiebreak",
    "context_from_record",
    "detect_feedback",
    "tiebreak_candidates",
]

logger = logging.getLogger(__name__)

WEIGHTS_FILE = "router.toml"
EXEMPLARS_FILE = "router_exemplars.toml"
OVERRIDE_FILE = Path("generated") / "router_weights.json"
SIM_SIGNALS = {mode: f"sim_{mode.lower()}" for mode in MODES}

_NEGATIVE_FEEDBACK_RE = re.compile(
    r"\b(?:that'?s|that is|this is|it'?s) not what i (?:asked|meant|said|wanted|need(?:ed)?)\b|^no,? i meant\b|"
    r"^(?:no,? )?(?:that'?s |that is |you'?re |this is )?(?:wrong|incorrect|not right|not true)\b|"
    r"\byou (?:misunderstood|got it wrong|didn'?t (?:answer|understand|listen))\b|\bnot what i (?:asked|meant)\b|"
    r"\b(?:that'?s|that is|this is) (?:not (?:helpful|useful|it)|useless|unhelpful)\b|"
    r"\bthat (?:doesn'?t|does not|didn'?t) help\b|^(?:nope|try again)\b|\bwrong answer\b"
)
_POSITIVE_FEEDBACK_RE = re.compile(
    r"^(?:perfect|exactly|spot on|nailed it|great answer|excellent)\b|"
    r"\b(?:that'?s|that is|this is) (?:so |really |very )?(?:helpful|perfect|exactly (?:it|right|what i needed)|"
    r"what i (?:needed|wanted)|right|great|useful)\b|\bthat (?:really )?(?:helps|helped|worked)\b|"
    r"\b(?:thanks|thank you),? (?:that|this) (?:helps|helped|is helpful|was helpful)\b|\bgreat answer\b"
)


@dataclass(frozen=True)
class RouterConfig:
    """The tunable part of the router; every field can be overridden by the regulator's file."""

    weights: dict[str, dict[str, float]]
    temperature: float = 1.0
    tiebreak_margin: float = 0.5
    warmth_narrowing: float = 0.5
    exemplar_top_k: int = 3
    recent_turns: int = 2
    version: str = ""

    def tiebreak_threshold(self, warmth: float) -> float:
        """The margin under which a tie-break is allowed; warmer context needs a closer call."""
        warmth = min(max(warmth, 0.0), 1.0)
        return self.tiebreak_margin * (1.0 - self.warmth_narrowing * warmth)


@dataclass(frozen=True)
class ScoringSection:
    temperature: float = 1.0


@dataclass(frozen=True)
class TiebreakSection:
    margin: float = 0.5
    warmth_narrowing: float = 0.5


@dataclass(frozen=True)
class ExemplarsSection:
    top_k: int = 3


@dataclass(frozen=True)
class OscillationSection:
    recent_turns: int = 2


@dataclass(frozen=True)
class ScalarSections:
    """The scalar sections of ``router.toml``, read strictly; ``[weights]`` is validated on its own."""

    scoring: ScoringSection = field(default_factory=ScoringSection)
    tiebreak: TiebreakSection = field(default_factory=TiebreakSection)
    exemplars: ExemplarsSection = field(default_factory=ExemplarsSection)
    oscillation: OscillationSection = field(default_factory=OscillationSection)


@dataclass(frozen=True)
class RoutingDecision:
    """One routing outcome with everything the audit row and ``engram route`` show."""

    mode: str
    confidence: float
    scores: dict[str, float]
    probabilities: dict[str, float]
    signals: dict[str, float]
    margin: float
    tiebreak_eligible: bool
    latency_ms: float
    weights_version: str
    deterministic_mode: str
    tiebreaker_used: bool = False
    tiebreaker_result: str | None = None
    embedding_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable snapshot."""
        return asdict(self)


def known_signals() -> frozenset[str]:
    """Every name a weight may refer to: the collected signals, the similarities and ``bias``."""
    names = set(collect_signals(RoutingContext(text="x")))
    return frozenset(names | set(SIM_SIGNALS.values()) | {"embedding_used", "bias"})


def _deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, got {value!r}")
    return float(value)


def parse_config(raw: Mapping[str, Any], label: str = WEIGHTS_FILE) -> RouterConfig:
    """Validate a merged config mapping; raises ValueError on anything the router cannot use.

    Args:
        label: the file named in error messages.
    """
    sections = dict(raw)
    weights = _parse_weights(sections.pop("weights", None))
    scalars = parse_sections(label, ScalarSections(), sections)
    config = RouterConfig(
        weights=weights,
        temperature=scalars.scoring.temperature,
        tiebreak_margin=scalars.tiebreak.margin,
        warmth_narrowing=scalars.tiebreak.warmth_narrowing,
        exemplar_top_k=scalars.exemplars.top_k,
        recent_turns=scalars.oscillation.recent_turns,
    )
    if not all(map(math.isfinite, (config.temperature, config.tiebreak_margin, config.warmth_narrowing))):
        raise ValueError("scoring.temperature and the tiebreak values must be finite numbers")
    if config.temperature <= 0 or config.exemplar_top_k < 1 or not 0 <= config.warmth_narrowing <= 1:
        raise ValueError("need temperature > 0, exemplars.top_k >= 1 and 0 <= warmth_narrowing <= 1")
    canonical = json.dumps(asdict(config), sort_keys=True).encode()
    return replace(config, version=hashlib.sha256(canonical).hexdigest()[:12])


def _parse_weights(weights_raw: Any) -> dict[str, dict[str, float]]:
    if not isinstance(weights_raw, Mapping) or set(weights_raw) != set(MODES):
        raise ValueError(f"[weights] must have exactly the modes {MODES}")
    allowed = known_signals()
    weights: dict[str, dict[str, float]] = {}
    for mode, table in weights_raw.items():
        if not isinstance(table, Mapping):
            raise ValueError(f"weights.{mode} must be a table")
        unknown = set(table) - allowed
        if unknown:
            raise ValueError(f"weights.{mode} names unknown signals {sorted(unknown)}")
        weights[mode] = {name: _number(value, f"weights.{mode}.{name}") for name, value in sorted(table.items())}
    return weights


class ConfigSource:
    """Base config from TOML plus the regulator's JSON override, re-read whenever its stat changes."""

    def __init__(self, base_path: Path, override_path: Path) -> None:
        base_raw = read_toml(base_path)
        if base_raw is None:
            raise SettingsError(f"router weights not found: {base_path}")
        self._base_raw = base_raw
        self.override_path = override_path
        self._base = parse_config(self._base_raw, base_path.name)
        self._config = self._base
        self._stamp: tuple[int, int, int] | None = None

    def current(self) -> RouterConfig:
        """The config in force now; costs one ``os.stat`` when nothing changed."""
        try:
            st = os.stat(self.override_path)
            stamp: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._stamp = stamp
            self._reload(stamp is not None)
        return self._config

    def _reload(self, exists: bool) -> None:
        if not exists:
            if self._config is not self._base:
                logger.info("router override %s removed; back to weights %s", self.override_path, self._base.version)
            self._config = self._base
            return
        try:
            override = json.loads(self.override_path.read_text(encoding="utf-8"))
            if not isinstance(override, Mapping):
                raise ValueError("top level must be an object")
            config = parse_config(_deep_merge(self._base_raw, override), self.override_path.name)
        except (OSError, ValueError) as exc:  # a bad regulator write must never stop routing
            logger.warning("ignoring malformed router override %s (%s); keeping weights %s",
                           self.override_path, exc, self._config.version)
            return
        self._config = config
        logger.info("router weights %s loaded from %s", config.version, self.override_path)


class ExemplarIndex:
    """Embedded exemplar sentences per mode; similarity is the mean of the top-k cosines."""

    def __init__(self, matrix: np.ndarray, spans: dict[str, tuple[int, int]], model_id: str) -> None:
        self.matrix = matrix
        self.spans = spans
        self.model_id = model_id

    @classmethod
    def build(cls, exemplars: Mapping[str, list[str]], embedder: Embedder) -> ExemplarIndex:
        """Embed every exemplar once (called when the router is built)."""
        texts: list[str] = []
        spans: dict[str, tuple[int, int]] = {}
        for mode in MODES:
            sentences = list(exemplars.get(mode, []))
            if not sentences:
                raise ValueError(f"{EXEMPLARS_FILE} has no exemplars for {mode}")
            spans[mode] = (len(texts), len(texts) + len(sentences))
            texts.extend(sentences)
        return cls(embedder.embed_many(texts), spans, embedder.model_id)

    def similarities(self, vector: np.ndarray, top_k: int) -> dict[str, float]:
        """Top-k-mean cosine similarity of ``vector`` to each mode's exemplars."""
        cosines = self.matrix @ vector
        result = {}
        for mode, (start, end) in self.spans.items():
            row = cosines[start:end]
            k = min(top_k, len(row))
            result[SIM_SIGNALS[mode]] = float(np.partition(row, len(row) - k)[-k:].mean())
        return result


def load_exemplars(path: Path) -> dict[str, list[str]]:
    """Read ``[MODE] examples = [...]`` tables."""
    with path.open("rb") as handle:
        raw = tomllib.load(handle)
    return {mode: [str(s) for s in raw.get(mode, {}).get("examples", [])] for mode in MODES}


def score_modes(signals: Mapping[str, float], weights: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Linear score per mode: bias + Σ weight · signal."""
    scores = {}
    for mode in MODES:
        table = weights[mode]
        total = table.get("bias", 0.0)
        for name, weight in table.items():
            if name != "bias":
                total += weight * signals.get(name, 0.0)
        scores[mode] = round(total, 4)
    return scores


def softmax(scores: Mapping[str, float], temperature: float) -> dict[str, float]:
    """Scores → probabilities (numerically stable)."""
    top = max(scores.values())
    exps = {mode: math.exp((value - top) / temperature) for mode, value in scores.items()}
    total = sum(exps.values())
    return {mode: round(value / total, 4) for mode, value in exps.items()}


def _ranked(scores: Mapping[str, float]) -> list[str]:
    # Ties resolve in MODES order so the same scores always give the same winner.
    return sorted(MODES, key=lambda mode: (-scores[mode], MODES.index(mode)))


def tiebreak_candidates(decision: RoutingDecision) -> tuple[str, str]:
    """The two best modes by deterministic score, best first."""
    first, second = _ranked(decision.scores)[:2]
    return first, second


def _normalise_mode(chosen: str | None) -> str | None:
    if not chosen:
        return None
    cleaned = chosen.strip().strip(".\"'`*").upper()
    return cleaned if cleaned in MODES else None


def apply_tiebreak(decision: RoutingDecision, chosen_mode: str | None) -> RoutingDecision:
    """Apply the LLM tie-breaker's answer: one of the top two wins; anything else keeps the deterministic mode."""
    result = _normalise_mode(chosen_mode)
    mode = result if result in tiebreak_candidates(decision) else decision.deterministic_mode
    return replace(decision, mode=mode, confidence=decision.probabilities[mode], tiebreaker_used=True,
                   tiebreaker_result=result)


def context_from_record(text: str, context: Mapping[str, Any] | None = None,
                        embedding: np.ndarray | None = None) -> RoutingContext:
    """Build a context from a JSON-like record (routing set, ``engram route --file``); warmth defaults from history."""
    context = context or {}
    memory = [(str(user), str(reply)) for user, reply in context.get("working_memory", [])]
    return RoutingContext(
        text=text,
        embedding=embedding,
        working_memory=memory,
        context_warmth=float(context.get("context_warmth", min(1.0, len(memory) / 3))),
        memory_confidence=float(context.get("memory_confidence", 0.0)),
        topic_confidence=float(context.get("topic_confidence", 0.5 if memory else 0.0)),
        topic_is_new=bool(context.get("topic_is_new", not memory)),
        previous_mode=context.get("previous_mode"),
        turns_since_previous_mode=int(context.get("turns_since_previous_mode", 1)),
        pending_confirmation=bool(context.get("pending_confirmation", False)),
    )


class ModeRouter:
    """Routes a message to RESPOND / CLARIFY / ACKNOWLEDGE / ACT / IGNORE from its signals."""

    def __init__(self, configs_dir: Path, embedder: Embedder | None = None) -> None:
        configs_dir = Path(configs_dir)
        self.embedder = embedder
        self.source = ConfigSource(configs_dir / WEIGHTS_FILE, configs_dir / OVERRIDE_FILE)
        self.exemplars = None
        if embedder is not None:
            self.exemplars = ExemplarIndex.build(load_exemplars(configs_dir / EXEMPLARS_FILE), embedder)

    @property
    def config(self) -> RouterConfig:
        """The weights in force right now (hot-reloaded)."""
        return self.source.current()

    def route(self, ctx: RoutingContext) -> RoutingDecision:
        """Score every mode for ``ctx``; uses ``ctx.embedding`` as given and never embeds by itself."""
        started = time.perf_counter()
        config = self.source.current()
        signals = collect_signals(ctx, config.recent_turns)
        signals.update(self._similarities(ctx.embedding, config.exemplar_top_k))
        signals = {name: round(value, 4) for name, value in signals.items()}
        scores = score_modes(signals, config.weights)
        probabilities = softmax(scores, config.temperature)
        first, second = _ranked(scores)[:2]
        margin = round(scores[first] - scores[second], 4)
        return RoutingDecision(
            mode=first,
            confidence=probabilities[first],
            scores=scores,
            probabilities=probabilities,
            signals=signals,
            margin=margin,
            tiebreak_eligible=margin < config.tiebreak_threshold(ctx.context_warmth),
            latency_ms=round((time.perf_counter() - started) * 1000, 4),
            weights_version=config.version,
            deterministic_mode=first,
            embedding_model=self.exemplars.model_id if self.exemplars and signals["embedding_used"] else None,
        )

    def route_text(self, text: str, context: Mapping[str, Any] | None = None) -> RoutingDecision:
        """Embed ``text`` with the router's embedder (if any) and route it; for CLIs and tests."""
        embedding = self.embedder.embed(text) if self.embedder is not None and text.strip() else None
        return self.route(context_from_record(text, context, embedding))

    def _similarities(self, embedding: np.ndarray | None, top_k: int) -> dict[str, float]:
        sims = dict.fromkeys(SIM_SIGNALS.values(), 0.0)
        usable = self.exemplars is not None and embedding is not None
        if usable and embedding.shape != (self.exemplars.matrix.shape[1],):
            logger.warning("embedding shape %s does not match exemplars %s; ignoring it",
                           embedding.shape, self.exemplars.matrix.shape)
            usable = False
        if usable:
            sims.update(self.exemplars.similarities(np.asarray(embedding, dtype=np.float32), top_k))
        sims["embedding_used"] = 1.0 if usable else 0.0
        return sims


def detect_feedback(text: str) -> str | None:
    """Explicit feedback on the previous reply: "negative", "positive" or None."""
    lower = text_view(text).lower
    if _NEGATIVE_FEEDBACK_RE.search(lower):
        return "negative"
    if _POSITIVE_FEEDBACK_RE.search(lower):
        return "positive"
    return None
