"""The OpenAI chat-completions wire format as the fake LLM writes it: bodies, SSE chunks, breakages."""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.llm_steps import DEFAULT_CHUNK_SIZE, Cut, Error, Garbage, Hang, Json, Reply, Step, ToolCalls

MODEL_ID = "fake-llm"
DONE = b"data: [DONE]\n\n"


def conversation_text(body: dict[str, Any]) -> str:
    """All message text of a request, for route matching."""
    return "\n".join(_content_text(message.get("content")) for message in body.get("messages", []))


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def default_text(body: dict[str, Any]) -> str:
    """The deterministic reply when nothing is scripted: ``{}`` for JSON mode, else an echo."""
    if (body.get("response_format") or {}).get("type") in ("json_object", "json_schema"):
        return "{}"
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    last = _content_text(users[-1].get("content")) if users else ""
    return f"Echo: {last[:60]}"


def _split(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


class Exchange:
    """Writes one chat-completion answer in the shape the request asked for."""

    _ids = itertools.count(1)

    def __init__(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], stop: threading.Event) -> None:
        self.handler = handler
        self.body = body
        self.stop = stop
        self.stream = bool(body.get("stream"))
        self.id = f"chatcmpl-fake{next(self._ids)}"
        self.model = str(body.get("model") or MODEL_ID)

    def answer(self, step: Step | None) -> None:
        """Dispatch on the step type; a step that ends without a complete answer closes the connection."""
        self.chunked = False
        self.complete = False
        try:
            self._answer(step)
        finally:
            if not self.complete:
                self.handler.close_connection = True

    def _answer(self, step: Step | None) -> None:
        if step is None:
            self.text(default_text(self.body))
        elif isinstance(step, Reply):
            self.text(step.text, step.chunk_size, step.delay_s, step.per_chunk_delay_s, step.usage, step.end_body)
        elif isinstance(step, Json):
            self.text(json.dumps(step.obj))
        elif isinstance(step, ToolCalls):
            self.tool_calls(step)
        elif isinstance(step, Error):
            self.error(step)
        elif isinstance(step, Garbage):
            self.garbage(step.event)
        elif isinstance(step, Cut):
            self.cut(step)
        elif isinstance(step, Hang):
            if not self.stop.wait(step.seconds):
                self.text(default_text(self.body))

    def text(self, text: str, chunk_size: int = DEFAULT_CHUNK_SIZE, delay_s: float = 0.0,
             per_chunk_delay_s: float = 0.0, usage: bool = True, end_body: bool = True) -> None:
        if delay_s and self.stop.wait(delay_s):
            return
        pieces = _split(text, chunk_size)
        usage_obj = self._usage(len(pieces)) if usage else None
        if not self.stream:
            message = {"role": "assistant", "content": text}
            self._send_json(200, self._completion(message, "stop", usage_obj))
            return
        events = [{"role": "assistant", "content": ""}] + [{"content": piece} for piece in pieces]
        self._send_stream(events, "stop", usage_obj, per_chunk_delay_s, end_body)

    def tool_calls(self, step: ToolCalls) -> None:
        calls = []
        for index, (name, args) in enumerate(step.calls):
            arguments = args if isinstance(args, str) else json.dumps(args)
            function = {"name": name, "arguments": arguments}
            calls.append({"id": f"call_{index}", "type": "function", "function": function})
        usage_obj = self._usage(len(calls) + 1)
        if not self.stream:
            message = {"role": "assistant", "content": step.text or None, "tool_calls": calls}
            self._send_json(200, self._completion(message, "tool_calls", usage_obj))
            return
        events: list[dict[str, Any]] = [{"role": "assistant", "content": step.text or None}]
        for index, call in enumerate(calls):
            # OpenAI sends id, type and name first, then the arguments in fragments.
            head = {"index": index, "id": call["id"], "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": ""}}
            events.append({"tool_calls": [head]})
            for piece in _split(call["function"]["arguments"], DEFAULT_CHUNK_SIZE):
                events.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        self._send_stream(events, "tool_calls", usage_obj, 0.0)

    def error(self, step: Error) -> None:
        body = step.body if step.body is not None else {
            "error": {"message": f"scripted error {step.status}", "type": "server_error", "code": step.status}
        }
        raw = body if isinstance(body, str) else json.dumps(body)
        self._send_raw(step.status, "application/json", raw.encode(), step.headers)

    def cut(self, step: Cut) -> None:
        if not self.stream:  # a cut non-streamed answer: a body shorter than its Content-Length
            self._start(200, "application/json", 4096)
            self.handler.wfile.write(b'{"id": "cut", "choices": [')
            self.handler.wfile.flush()
            return
        # A body delimited by the connection's end (no length, not chunked): closing it ends the body
        # as a dropped connection would, and the client sees a stream without its finish.
        self._start(200, "text/event-stream", headers={"Connection": "close"}, chunked=False)
        pieces = _split(step.text, step.chunk_size)[: step.after_chunks]
        for delta in [{"role": "assistant", "content": ""}] + [{"content": piece} for piece in pieces]:
            self._event(self._chunk(delta, None))

    def garbage(self, event: str | None = None) -> None:
        if self.stream and event is not None:
            self._send_raw(200, "text/event-stream", b"data: " + event.encode() + b"\n\n" + DONE)
        elif self.stream:
            self._send_raw(200, "text/event-stream", b'data: {"choices": [{"delta": {"content": "x"\n\n' + DONE)
        else:
            self._send_raw(200, "application/json", b'{"id": "broken", "choices": [ {"message": ')

    def _usage(self, completion_tokens: int) -> dict[str, int]:
        prompt_tokens = max(1, len(conversation_text(self.body)) // 4)
        return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens}

    def _completion(self, message: dict[str, Any], finish: str, usage: dict[str, int] | None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": self.id, "object": "chat.completion", "created": int(time.time()), "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if usage:
            payload["usage"] = usage
        return payload

    def _chunk(self, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": int(time.time()), "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def _send_stream(self, deltas: list[dict[str, Any]], finish: str, usage: dict[str, int] | None,
                     per_chunk_delay_s: float, end_body: bool = True) -> None:
        self._start(200, "text/event-stream")
        for index, delta in enumerate(deltas):
            # Pause between content chunks, not after the role-only opener: the first text arrives at once.
            if index > 1 and per_chunk_delay_s and self.stop.wait(per_chunk_delay_s):
                return
            self._event(self._chunk(delta, None))
        self._event(self._chunk({}, finish))
        if usage and (self.body.get("stream_options") or {}).get("include_usage"):
            self._event({**self._chunk({}, None), "choices": [], "usage": usage})
        self._write(DONE)
        if end_body:
            self._end_body()

    def _event(self, payload: dict[str, Any]) -> None:
        self._write(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write(self, raw: bytes) -> None:
        """One piece of a streamed body, as a chunk when the body is chunked."""
        if self.chunked:
            raw = b"%x\r\n%s\r\n" % (len(raw), raw)
        self.handler.wfile.write(raw)
        self.handler.wfile.flush()

    def _end_body(self) -> None:
        """The body is complete: the last chunk of a chunked one; the connection may serve the next request."""
        if self.chunked:
            self.handler.wfile.write(b"0\r\n\r\n")
            self.handler.wfile.flush()
        self.complete = True

    def _send_json(self, status: int, payload: Any) -> None:
        self._send_raw(status, "application/json", json.dumps(payload).encode())

    def _send_raw(self, status: int, content_type: str, raw: bytes, headers: dict[str, str] | None = None) -> None:
        self._start(status, content_type, len(raw), headers)
        self.handler.wfile.write(raw)
        self.complete = True

    def _start(self, status: int, content_type: str, length: int | None = None,
               headers: dict[str, str] | None = None, chunked: bool = True) -> None:
        """Status and headers; a body of unknown length is chunked unless ``chunked`` is False."""
        self.handler.send_response(status)
        self.handler.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.handler.send_header(name, value)
        if length is not None:
            self.handler.send_header("Content-Length", str(length))
        elif chunked:
            self.handler.send_header("Transfer-Encoding", "chunked")
            self.chunked = True
        self.handler.end_headers()
