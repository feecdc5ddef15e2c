"""Query-string arguments shared by the JSON routes: a bad value is a clear 400, never a guess."""

from __future__ import annotations

from flask import request

from services.errors import BadRequest


def int_arg(name: str, default: int | None, low: int, high: int) -> int | None:
    """An optional integer query argument within [low, high]; missing or empty gives ``default``."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"'{name}' must be an integer") from None
    if not low <= value <= high:
        raise BadRequest(f"'{name}' must be between {low} and {high}")
    return value
