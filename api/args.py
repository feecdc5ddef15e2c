"""What the JSON routes share about a request: its query-string arguments (a bad value is a clear 400, never a
guess) and the 404 of a row the person does not have."""

from __future__ import annotations

from typing import Any, TypeVar

from flask import current_app, request

from services.errors import BadRequest, NotFound

Row = TypeVar("Row")
MAX_PAGE = 200  # rows a list route answers with at most


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


def sessions() -> Any:
    """The app's session factory."""
    return current_app.extensions["engram.sessions"]


def bounds() -> Any:
    """The request bounds (``configs/limits.toml``'s ``[request]``)."""
    return current_app.extensions["engram.limits"].request


def page_args(default_limit: int, max_limit: int) -> tuple[int, int]:
    """``?limit=`` (1..``max_limit``, default ``default_limit``) and ``?offset=`` (0..the configured max_offset):
    a list never answers with everything at once, nor skips an unbounded number of rows."""
    return int(int_arg("limit", default_limit, 1, max_limit)), int(int_arg("offset", 0, 0, bounds().max_offset))


def found(row: Row | None, what: str) -> Row:
    """``row``, or a 404 naming ``what``: another person's row is as missing as one that never was."""
    if row is None:
        raise NotFound(f"{what} not found")
    return row
