"""Typed TOML configuration files: ``[section] key = value`` into frozen dataclasses — the one loader.

A config class is a dataclass whose fields are section dataclasses with defaults. A field may carry its
allowed values (``at_least``, ``positive``, ``within``, ``one_of``), checked as the file is read. Reading
is strict, so a typo in ``configs/*.toml`` fails loudly at start-up instead of being ignored:
unknown sections and keys, wrongly typed values and values out of bounds raise ``SettingsError``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from dataclasses import field, fields, replace
from pathlib import Path
from typing import Any, TypeVar

from services.settings import SettingsError

T = TypeVar("T")


def checked(default: Any, rule: str, test: Callable[[Any], bool]) -> Any:
    """A section field whose value must pass ``test`` (``rule`` says how, in the error)."""
    return field(default=default, metadata={"rule": rule, "test": test})


def at_least(default: Any, low: float) -> Any:
    return checked(default, f">= {low}", lambda value: value >= low)


def positive(default: Any) -> Any:
    return checked(default, "> 0", lambda value: value > 0)


def within(default: Any, low: float, high: float) -> Any:
    return checked(default, f"within [{low}, {high}]", lambda value: low <= value <= high)


def one_of(default: Any, choices: tuple[Any, ...]) -> Any:
    return checked(default, f"one of {choices}", lambda value: value in choices)


def load_config(configs_dir: Path | None, name: str, default: T,
                rules: Callable[[T], Iterable[tuple[bool, str]]] | None = None) -> T:
    """``configs_dir/name`` over ``default`` (no directory or no file: the defaults), then the rules that
    relate several keys: each ``(broken, message)`` pair that is broken raises ``SettingsError``."""
    data = read_toml(Path(configs_dir) / name) if configs_dir is not None else None
    config = parse_sections(name, default, data or {})
    for broken, message in rules(config) if rules else ():
        if broken:
            raise SettingsError(f"{name}: {message}")
    return config


def once_per_process(extras: dict[str, Any], key: str, load: Callable[[], T]) -> T:
    """A config read once per worker process and kept in its context's ``extras``."""
    if key not in extras:
        extras[key] = load()
    return extras[key]


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
    known = {f.name: f for f in fields(default)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise SettingsError(f"{label}: [{name}] has unknown key {key!r}")
        values[key] = _coerce(label, name, key, getattr(default, key), value)
        rule = known[key].metadata
        if rule and not rule["test"](values[key]):
            raise SettingsError(f"{label}: [{name}] {key} = {value!r} should be {rule['rule']}")
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
