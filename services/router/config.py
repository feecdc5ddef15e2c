"""The router's weights: ``configs/router.toml`` plus the regulator's JSON override, hot-reloaded."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from services.config_files import parse_sections, read_toml
from services.router.exemplars import SIM_SIGNALS
from services.router.signals import MODES, RoutingContext, collect_signals
from services.settings import SettingsError

logger = logging.getLogger(__name__)

WEIGHTS_FILE = "router.toml"
OVERRIDE_FILE = Path("generated") / "router_weights.json"


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
