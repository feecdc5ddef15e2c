"""The router's weights: ``configs/router.toml``, read and validated once when a router is built."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from services.config_files import parse_sections, read_toml
from services.router.exemplars import SIM_SIGNALS
from services.router.signals import MODES, RoutingContext, collect_signals
from services.settings import SettingsError

WEIGHTS_FILE = "router.toml"


@dataclass(frozen=True)
class RouterConfig:
    """The tunable part of the router."""

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


def known_signals() -> frozenset[str]:
    """Every name a weight may refer to: the collected signals, the similarities and ``bias``."""
    names = set(collect_signals(RoutingContext(text="x")))
    return frozenset(names | set(SIM_SIGNALS.values()) | {"embedding_used", "bias"})


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


def load_router_config(path: Path) -> RouterConfig:
    """``router.toml`` at ``path``, validated; a missing file or a typo fails at start-up."""
    raw = read_toml(path)
    if raw is None:
        raise SettingsError(f"router weights not found: {path}")
    return parse_config(raw, path.name)
