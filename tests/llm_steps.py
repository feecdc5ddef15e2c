"""The fake LLM's script vocabulary: what one request is answered with (see ``tests/fake_llm.py``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

DEFAULT_CHUNK_SIZE = 8


@dataclass
class Reply:
    """Answer with ``text``; streamed in ``chunk_size`` pieces when the request streams."""

    text: str
    chunk_size: int = DEFAULT_CHUNK_SIZE
    delay_s: float = 0.0
    per_chunk_delay_s: float = 0.0
    usage: bool = True
    end_body: bool = True  # False: a streamed body is cut right after [DONE], without its last chunk
    kind: ClassVar[str] = "reply"


@dataclass
class ToolCalls:
    """Answer with tool calls; an argument given as a str is sent verbatim (to test invalid JSON)."""

    calls: list[tuple[str, dict[str, Any] | str]]
    text: str = ""
    kind: ClassVar[str] = "tool_calls"


@dataclass
class Error:
    """Answer with an HTTP error status and an OpenAI-style error body (or ``body`` as given), plus ``headers``."""

    status: int = 500
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"Retry-After": "1"} with a 429
    kind: ClassVar[str] = "error"


@dataclass
class Cut:
    """Stream the first ``after_chunks`` pieces of ``text``, then drop the connection (no finish, no [DONE])."""

    text: str
    after_chunks: int = 2
    chunk_size: int = DEFAULT_CHUNK_SIZE
    kind: ClassVar[str] = "cut"


@dataclass
class Garbage:
    """Answer 200 with a body that is not valid JSON (or a stream whose event is not).

    ``event``: a streamed answer sends this JSON text as its one event instead (valid JSON of the wrong shape).
    """

    event: str | None = None
    kind: ClassVar[str] = "garbage"


@dataclass
class Hang:
    """Sleep ``seconds`` before answering with the default reply (released by ``stop()``)."""

    seconds: float
    kind: ClassVar[str] = "hang"


@dataclass
class Json:
    """Answer with ``json.dumps(obj)`` as the content."""

    obj: Any
    kind: ClassVar[str] = "json"


Step = Reply | ToolCalls | Error | Garbage | Hang | Json | Cut
STEP_TYPES: dict[str, type] = {cls.kind: cls for cls in (Reply, ToolCalls, Error, Garbage, Hang, Json, Cut)}


def step_to_dict(step: Step) -> dict[str, Any]:
    """Serialise a step for ``POST /_script``."""
    return {"type": step.kind, **asdict(step)}


def step_from_dict(data: dict[str, Any]) -> Step:
    """Build a step from its ``POST /_script`` form."""
    fields = dict(data)
    cls = STEP_TYPES[fields.pop("type")]
    if cls is ToolCalls:
        fields["calls"] = [tuple(call) for call in fields["calls"]]
    return cls(**fields)
