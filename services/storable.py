"""Can a value be stored as it is? PostgreSQL text cannot hold NUL, UTF-8 cannot hold a lone
surrogate (JSON's "\\ud800"), and JSON columns cannot hold NaN or Infinity.

Every entry point (the HTTP API, the import file, the bundle) asks here before anything is
written, so such input is a clear 4xx or a reported bad line, never a failure halfway.
"""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 32


def unstorable_reason(value: Any, where: str = "value", depth: int = 0) -> str | None:
    """Why ``value`` (a decoded JSON value, walked recursively) cannot be stored, or None when it can."""
    if depth > MAX_DEPTH:
        return f"{where} is nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, str):
        return _text_reason(value, where)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where} is not a finite number"
    if isinstance(value, dict):
        for key, item in value.items():
            reason = _text_reason(str(key), f"a key of {where}") or unstorable_reason(item, f"{where}.{key}", depth + 1)
            if reason:
                return reason
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            reason = unstorable_reason(item, f"{where}[{index}]", depth + 1)
            if reason:
                return reason
    return None


def _text_reason(text: str, where: str) -> str | None:
    if "\x00" in text:
        return f"{where} contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{where} is not valid Unicode (a lone surrogate)"
    return None
