"""What the JSON routes share about a request: its JSON body and its query-string arguments (a bad value is a
clear 400, never a guess), and the 404 of a row the person does not have."""

from __future__ import annotations

from typing import Any, TypeVar

from flask import current_app, request

from services.errors import BadRequest, NotFound, UnsupportedMediaType
from services.storable import unstorable_reason

Row = TypeVar("Row")
MAX_PAGE = 200  # rows a list route answers with at most


def json_body(allowed: set[str] | None = None) -> dict[str, Any]:
    """The request's JSON object; with ``allowed``, any other field is a 400 naming the known ones. A value
    PostgreSQL cannot store (a NUL in a text answered 500) is a 400 too."""
    if request.mimetype != "application/json":
        raise UnsupportedMediaType("Content-Type must be application/json")
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise BadRequest("body must be a JSON object")
    unknown = sorted(set(data) - allowed) if allowed is not None else []
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(unknown)} (known: {', '.join(sorted(allowed or ()))})")
    reason = unstorable_reason(data, "body")
    if reason:
        raise BadRequest(reason)
    return data


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
