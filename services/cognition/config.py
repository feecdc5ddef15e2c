"""Cognition settings from ``configs/cognition.toml``: gates, bars and bounds of each service."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.config_files import load_config, once_per_process, within
from services.settings import SettingsError

CONFIG_FILE = "cognition.toml"


@dataclass(frozen=True)
class DriftConfig:
    active_within_h: float = 72.0  # only people who chatted this recently get thoughts
    conversation_gap_s: float = 600.0  # never interrupt a conversation: the last message must be older
    quiet_start: str = "22:00"  # person's local time; equal start and end = no quiet hours
    quiet_end: str = "08:00"
    daily_cap: int = 3  # thoughts (LLM calls) per person per local day
    min_interval_s: float = 7200.0  # between two thoughts of one person
    memory_window_h: float = 168.0  # memories newer than this, not yet drifted on, are worth a thought
    relevance_bar: float = within(0.6, 0, 1)  # pushed as a `thought` event only at or above this
    max_users_per_run: int = 2
    max_seeds: int = 6
    max_hops: int = 2
    decay: float = 0.5
    threshold: float = 0.02
    max_associations: int = 8
    graph_sources: int = 400

    def quiet_window(self) -> tuple[dt.time, dt.time]:
        return _clock_time(self.quiet_start, "quiet_start"), _clock_time(self.quiet_end, "quiet_end")


@dataclass(frozen=True)
class AutobiographyConfig:
    min_new_episodes: int = 1
    max_episodes: int = 20  # newest episodes given to one synthesis
    max_chars: int = 1500  # narrative kept at most this long
    max_users_per_run: int = 5


@dataclass(frozen=True)
class CognitionConfig:
    drift: DriftConfig = field(default_factory=DriftConfig)
    autobiography: AutobiographyConfig = field(default_factory=AutobiographyConfig)


def _clock_time(value: str, key: str) -> dt.time:
    try:
        return dt.time.fromisoformat(value)
    except ValueError:
        raise SettingsError(f"{CONFIG_FILE}: [drift] {key} = {value!r} should be a time like \"22:00\"") from None


def load_cognition_config(configs_dir: Path | None) -> CognitionConfig:
    """The file's values over the defaults; a missing file means the defaults."""
    config = load_config(configs_dir, CONFIG_FILE, CognitionConfig())
    config.drift.quiet_window()  # fail at load time, not at 3 a.m.
    return config


def cognition_config(context: Any) -> CognitionConfig:
    """``configs/cognition.toml`` of the worker's context, read once per process."""
    return once_per_process(context.extras, "cognition_config",
                            lambda: load_cognition_config(context.settings.configs_dir))
