"""One routing outcome, and the arithmetic behind it: linear scores, softmax, the LLM tie-break."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from services.router.signals import MODES


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


def ranked(scores: Mapping[str, float]) -> list[str]:
    # Ties resolve in MODES order so the same scores always give the same winner.
    return sorted(MODES, key=lambda mode: (-scores[mode], MODES.index(mode)))


def tiebreak_candidates(decision: RoutingDecision) -> tuple[str, str]:
    """The two best modes by deterministic score, best first."""
    first, second = ranked(decision.scores)[:2]
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
