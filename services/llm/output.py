"""Pure parsing of LLM output: JSON objects in free text, tool calls (native or written as text), note turns.

No I/O here: ``services.llm.client`` calls these on what the endpoint returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from services.errors import LLMMalformedOutput

Message = dict[str, Any]


class StopStream(Exception):  # noqa: N818 - a signal to stop reading, not an error
    """Raised by a delta callback to end a streamed answer early (the text so far is kept)."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text``, tolerating ```json fences and prose around it."""
    body = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL | re.IGNORECASE)
    if fenced:
        body = fenced.group(1).strip()
    start = body.find("{")
    if start < 0:
        raise LLMMalformedOutput(f"no JSON object in answer: {text[:80]!r}")
    try:
        data, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        raise LLMMalformedOutput(f"invalid JSON ({exc.msg} at char {exc.pos}): {text[:80]!r}") from None
    if not isinstance(data, dict):
        raise LLMMalformedOutput(f"expected a JSON object, got {type(data).__name__}")
    return data


def actions_from_text(text: str) -> tuple[dict[str, Any] | None, list[ToolCall]]:
    """Tool calls written as ``{"actions": [{"name", "arguments"}]}`` (or one bare action) in plain text."""
    try:
        data = parse_json_object(text)
    except LLMMalformedOutput:
        return None, []
    actions = data.get("actions")
    if actions is None and "name" in data:
        actions = [data]
    if not isinstance(actions, list):
        return data, []
    return data, [_text_call(index, action) for index, action in enumerate(actions)]


def _text_call(index: int, action: Any) -> ToolCall:
    call_id = f"text_call_{index}"
    if not isinstance(action, dict) or not isinstance(action.get("name"), str) or not action["name"]:
        return ToolCall(call_id, "", arguments_error=f"action without a name: {str(action)[:80]}")
    arguments, error = parse_arguments(action.get("arguments", action.get("args")))
    return ToolCall(call_id, action["name"], arguments, error)


def native_call(call: Any) -> ToolCall:
    """A native ``tool_calls`` entry as a ToolCall; unusable arguments become ``arguments_error``."""
    function = getattr(call, "function", None)
    if function is None:
        return ToolCall(call.id, "", arguments_error=f"unsupported tool call type {getattr(call, 'type', '?')!r}")
    arguments, error = parse_arguments(function.arguments)
    return ToolCall(call.id, function.name, arguments, error)


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Tool arguments as a dict, plus an error message instead of an exception when they are unusable."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {}, f"arguments are not valid JSON ({exc.msg}): {raw[:80]!r}"
    if not isinstance(raw, dict):
        return {}, f"arguments must be a JSON object, got {type(raw).__name__}"
    return raw, None


def with_note(messages: list[Message], note: str) -> list[Message]:
    """``messages`` with ``note`` added to the last user turn (a new turn would break role alternation)."""
    if messages and messages[-1].get("role") == "user" and isinstance(messages[-1].get("content"), str):
        last = messages[-1]
        return [*messages[:-1], {**last, "content": f"{last['content']}\n\n{note}"}]
    return [*messages, {"role": "user", "content": note}]
