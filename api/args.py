"""Query-string arguments shared by the JSON routes: a bad value is a clear 400, never a guess."""

from __future__ import annotations

from flask import current_app, request

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


def page_args(default_limit: int, max_limit: int) -> tuple[int, int]:
    """``?limit=`` (1..``max_limit``, default ``default_limit``) and ``?offset=`` (0..the configured max_offset):
    a list never answers with everything at once, nor skips an unbounded number of rows."""
    max_offset = current_app.extensions["engram.limits"].request.max_offset
    return int(int_arg("limit", default_limit, 1, max_limit)), int(int_arg("offset", 0, 0, max_offset))
