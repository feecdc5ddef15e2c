"""Typed TOML configuration files: ``[section] key = value`` into frozen dataclasses.

A config class is a dataclass whose fields are section dataclasses with defaults. Reading
is strict, so a typo in ``configs/*.toml`` fails loudly at start-up instead of being ignored:
unknown sections and keys and wrongly typed values raise ``SettingsError``.
"""

from __future__ import annotations

import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TypeVar

from services.settings import SettingsError

T = TypeVar("T")


def read_toml(path: Path) -> dict[str, Any] | None:
    """The parsed file, or None when it does not exist."""
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path.name}: not valid TOML: {exc}") from None


def parse_sections(label: str, config: T, data: dict[str, Any]) -> T:
    """Overlay ``data`` onto the defaults in ``config``, section by section, checking every value."""
    sections = {f.name for f in fields(config)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - sections)
    if unknown:
        raise SettingsError(f"{label}: unknown section(s) {unknown} (known: {', '.join(sorted(sections))})")
    for name, table in data.items():
        if not isinstance(table, dict):
            raise SettingsError(f"{label}: [{name}] must be a table")
        config = replace(config, **{name: parse_section(label, name, getattr(config, name), table)})  # type: ignore[type-var]
    return config


def parse_section(label: str, name: str, default: T, table: dict[str, Any]) -> T:
    """One section: known keys only, each value of its default's type (ints pass for floats, lists for tuples)."""
    known = {f.name: getattr(default, f.name) for f in fields(default)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise SettingsError(f"{label}: [{name}] has unknown key {key!r}")
        values[key] = _coerce(label, name, key, known[key], value)
    return replace(default, **values)  # type: ignore[type-var]


def _coerce(label: str, section: str, key: str, default: Any, value: Any) -> Any:
    expected = type(default)
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is tuple and isinstance(value, list):
        return tuple(value)
    # bool is an int subclass: keep `max_hops = true` from passing as a number.
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
        raise SettingsError(f"{label}: [{section}] {key} = {value!r} should be {expected.__name__}")
    return value
