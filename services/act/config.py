"""ACT settings from ``configs/act.toml``: loop limits, dispatch, compaction, critic and skill parameters."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from services.settings import SettingsError

CONFIG_FILE = "act.toml"


@dataclass(frozen=True)
class LoopLimits:
    max_iterations: int = 6
    wall_clock_s: float = 90.0
    fatigue_budget: float = 12.0
    fatigue_base_cost: float = 1.0
    fatigue_growth: float = 0.5
    max_actions_per_step: int = 4
    native_tools: bool = True

    def action_cost(self, iteration: int) -> float:
        """Fatigue one action costs at ``iteration`` (0-based): it grows the longer the loop runs."""
        return self.fatigue_base_cost * (1.0 + self.fatigue_growth * iteration)


@dataclass(frozen=True)
class DispatchLimits:
    action_timeout_s: float = 10.0
    release_grace_s: float = 5.0


@dataclass(frozen=True)
class CompactionConfig:
    context_window: int = 0
    threshold: float = 0.9
    chars_per_token: float = 4.0
    max_restarts: int = 1
    llm_checkpoint: bool = True


@dataclass(frozen=True)
class CriticConfig:
    confirm_below: float = 0.7
    pending_ttl_s: float = 1800.0


@dataclass(frozen=True)
class AssociateConfig:
    max_hops: int = 2
    decay: float = 0.5
    threshold: float = 0.02
    max_results: int = 8
    max_sources: int = 400


@dataclass(frozen=True)
class SkillLimits:
    recall_default_k: int = 5
    recall_max_k: int = 20
    max_list_items: int = 200
    max_text_chars: int = 500


@dataclass(frozen=True)
class ActConfig:
    loop: LoopLimits = field(default_factory=LoopLimits)
    dispatch: DispatchLimits = field(default_factory=DispatchLimits)
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    critic: CriticConfig = field(default_factory=CriticConfig)
    associate: AssociateConfig = field(default_factory=AssociateConfig)
    skills: SkillLimits = field(default_factory=SkillLimits)


SECTIONS = tuple(f.name for f in fields(ActConfig))


def load_act_config(configs_dir: Path) -> ActConfig:
    """Read ``act.toml`` (missing file → defaults); unknown keys and wrong types raise ``SettingsError``."""
    path = Path(configs_dir) / CONFIG_FILE
    if not path.is_file():
        return ActConfig()
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return parse_act_config(data)


def parse_act_config(data: dict[str, Any]) -> ActConfig:
    """Validate a parsed ``act.toml`` mapping."""
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise SettingsError(f"act.toml: unknown sections {sorted(unknown)} (known: {', '.join(SECTIONS)})")
    config = ActConfig()
    for name, table in data.items():
        config = replace(config, **{name: _section(getattr(config, name), table, name)})
    _check(config)
    return config


def _section(default: Any, table: Any, name: str) -> Any:
    if not isinstance(table, dict):
        raise SettingsError(f"act.toml: [{name}] must be a table")
    known = {f.name: type(getattr(default, f.name)) for f in fields(default)}
    for key, value in table.items():
        expected = known.get(key)
        if expected is None:
            raise SettingsError(f"act.toml: [{name}] has unknown key {key!r}")
        allowed: tuple[type, ...] = (int, float) if expected is float else (expected,)
        # bool is an int subclass: keep `max_hops = true` from passing as a number.
        if not isinstance(value, allowed) or (isinstance(value, bool) and expected is not bool):
            raise SettingsError(f"act.toml: [{name}] {key} = {value!r} should be {expected.__name__}")
    return replace(default, **{key: known[key](value) for key, value in table.items()})


def _check(config: ActConfig) -> None:
    loop, comp, assoc = config.loop, config.compaction, config.associate
    problems = [
        (loop.max_iterations < 1, "loop.max_iterations must be >= 1"),
        (loop.wall_clock_s <= 0 or loop.fatigue_budget <= 0, "loop.wall_clock_s and fatigue_budget must be > 0"),
        (loop.fatigue_base_cost <= 0 or loop.fatigue_growth < 0, "loop fatigue costs must be positive"),
        (loop.max_actions_per_step < 1, "loop.max_actions_per_step must be >= 1"),
        (config.dispatch.action_timeout_s <= 0, "dispatch.action_timeout_s must be > 0"),
        (not 0 < comp.threshold <= 1, "compaction.threshold must be in (0, 1]"),
        (comp.chars_per_token <= 0 or comp.context_window < 0, "compaction sizes must be positive"),
        (not 0 < assoc.decay < 1, "associate.decay must be in (0, 1)"),
        (assoc.max_hops < 1 or assoc.max_results < 1, "associate.max_hops and max_results must be >= 1"),
        (not 0 <= config.critic.confirm_below <= 1, "critic.confirm_below must be in [0, 1]"),
    ]
    for failed, message in problems:
        if failed:
            raise SettingsError(f"act.toml: {message}")
