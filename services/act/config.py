"""ACT settings from ``configs/act.toml``: loop limits, dispatch, compaction, critic and skill parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.config_files import at_least, checked, load_config, once_per_process, positive, within

CONFIG_FILE = "act.toml"


@dataclass(frozen=True)
class LoopLimits:
    max_iterations: int = at_least(6, 1)
    wall_clock_s: float = positive(90.0)
    fatigue_budget: float = positive(12.0)
    fatigue_base_cost: float = positive(1.0)
    fatigue_growth: float = at_least(0.5, 0)
    max_actions_per_step: int = at_least(4, 1)
    native_tools: bool = True

    def action_cost(self, iteration: int) -> float:
        """Fatigue one action costs at ``iteration`` (0-based): it grows the longer the loop runs."""
        return self.fatigue_base_cost * (1.0 + self.fatigue_growth * iteration)


@dataclass(frozen=True)
class DispatchLimits:
    action_timeout_s: float = positive(10.0)
    release_grace_s: float = 5.0


@dataclass(frozen=True)
class DueWords:
    """How long a vague length said for a due time is: "in a few minutes", "in a few hours"."""

    a_few_minutes: float = positive(5.0)
    a_few_hours: float = positive(3.0)


@dataclass(frozen=True)
class CompactionConfig:
    context_window: int = at_least(0, 0)
    threshold: float = checked(0.9, "within (0, 1]", lambda value: 0 < value <= 1)
    chars_per_token: float = positive(4.0)
    max_restarts: int = 1


@dataclass(frozen=True)
class CriticConfig:
    confirm_below: float = within(0.7, 0, 1)
    pending_ttl_s: float = 1800.0


@dataclass(frozen=True)
class AssociateConfig:
    max_hops: int = at_least(2, 1)
    decay: float = checked(0.5, "within (0, 1)", lambda value: 0 < value < 1)
    threshold: float = 0.02
    max_results: int = at_least(8, 1)
    max_sources: int = 400


@dataclass(frozen=True)
class SkillLimits:
    recall_default_k: int = at_least(5, 1)
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
    due: DueWords = field(default_factory=DueWords)


def load_act_config(configs_dir: Path | None) -> ActConfig:
    """Read ``act.toml`` (missing file → defaults); unknown keys, wrong types and bad values raise ``SettingsError``."""
    return load_config(configs_dir, CONFIG_FILE, ActConfig(), _rules)


def process_act_config(extras: dict[str, Any], configs_dir: Path | None) -> ActConfig:
    """``act.toml``, read once per process and kept in a worker context's ``extras``."""
    return once_per_process(extras, "act_config", lambda: load_act_config(configs_dir))


def _rules(config: ActConfig) -> list[tuple[bool, str]]:
    skills = config.skills
    return [(skills.recall_default_k > skills.recall_max_k, "skills.recall_default_k must be <= recall_max_k")]
