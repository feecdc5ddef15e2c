"""Per-role LLM settings (``configs/agents.toml``): each call names a role, the role picks the model,
sampling, token cap and timeout."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.config_files import parse_section, read_toml
from services.settings import SettingsError

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "default"
ROLES = ("respond", "clarify", "acknowledge", "act", "tiebreaker", "memory_chunker", "episodic_memory", "background")
# Off the hot path: these go to the background endpoint when there is one, and wait for chat turns.
BACKGROUND_ROLES = frozenset({"memory_chunker", "episodic_memory", "background"})


@dataclass(frozen=True)
class RoleConfig:
    model: str = DEFAULT_MODEL
    temperature: float = 0.7
    max_tokens: int = 512
    timeout_s: float = 60.0
    json_output: bool = False
    stream: bool = False
    context_window: int = 4096


def load_role_configs(configs_dir: Path) -> dict[str, RoleConfig]:
    """Read ``configs_dir/agents.toml`` (missing file → built-in defaults): ``[default]`` plus per-role overrides;
    every known role is present."""
    path = Path(configs_dir) / "agents.toml"
    data = read_toml(path)
    if data is None:
        logger.warning("no %s; using built-in LLM role defaults", path)
        data = {}
    base = _role_from_table(RoleConfig(), data.get("default", {}), "default")
    names = dict.fromkeys([*ROLES, *(key for key in data if key != "default")])
    return {"default": base} | {name: _role_from_table(base, data.get(name, {}), name) for name in names}


def with_overrides(roles: dict[str, RoleConfig], overrides: dict[str, Any], label: str) -> dict[str, RoleConfig]:
    """``roles`` with some keys of some roles replaced (a profile's ``[<profile>.roles.<role>]`` tables)."""
    changed = dict(roles)
    for name, table in overrides.items():
        changed[name] = _role_from_table(roles.get(name) or roles["default"], table, f"{label}.{name}")
    return changed


def _role_from_table(base: RoleConfig, table: Any, name: str) -> RoleConfig:
    if not isinstance(table, dict):
        raise SettingsError(f"agents.toml: [{name}] must be a table")
    cfg = parse_section("agents.toml", name, base, table)
    if cfg.max_tokens < 1 or cfg.timeout_s <= 0 or cfg.temperature < 0 or cfg.context_window <= cfg.max_tokens:
        raise SettingsError(f"agents.toml: [{name}] needs max_tokens ≥ 1, timeout_s > 0, temperature ≥ 0 "
                            "and context_window > max_tokens")
    return cfg
