"""Parse Server-Sent Event frames in tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass
class Frame:
    id: str | None
    event: str | None
    data: Any
    comment: bool = False


def parse_frames(chunks: Iterable[bytes | str]) -> list[Frame]:
    """Split a stream body into frames; comment frames (keepalives) are kept and flagged."""
    body = "".join(c.decode() if isinstance(c, bytes) else c for c in chunks)
    frames = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        fields: dict[str, str] = {}
        comment = False
        for line in block.splitlines():
            if line.startswith(":"):
                comment = True
                continue
            key, _, value = line.partition(": ")
            fields[key] = value
        data = json.loads(fields["data"]) if "data" in fields else None
        frames.append(Frame(fields.get("id"), fields.get("event"), data, comment and not fields))
    return frames


def events(frames: list[Frame]) -> list[str]:
    return [f.event for f in frames if not f.comment]
