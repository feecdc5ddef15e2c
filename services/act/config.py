"""ACT settings from ``configs/act.toml``: loop limits, dispatch, compaction, critic and skill parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.config_files import parse_sections, read_toml
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


def load_act_config(configs_dir: Path) -> ActConfig:
    """Read ``act.toml`` (missing file → defaults); unknown keys and wrong types raise ``SettingsError``."""
    data = read_toml(Path(configs_dir) / CONFIG_FILE)
    return ActConfig() if data is None else parse_act_config(data)


def parse_act_config(data: dict[str, Any]) -> ActConfig:
    """Validate a parsed ``act.toml`` mapping."""
    config = parse_sections(CONFIG_FILE, ActConfig(), data)
    _check(config)
    return config


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
        (not 1 <= config.skills.recall_default_k <= config.skills.recall_max_k,
         "skills.recall_default_k must be >= 1 and <= recall_max_k"),
    ]
    for failed, message in problems:
        if failed:
            raise SettingsError(f"act.toml: {message}")
