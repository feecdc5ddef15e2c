"""A scripted OpenAI-protocol HTTP server for tests, so the real ``openai`` client path runs.

In-process::

    server = FakeLLM()
    server.start()
    server.script(Reply("hello"), Error(429))      # consumed in order, one per request
    server.script_stream(Reply("streamed"))         # consumed by streamed requests only, before the above
    server.route(contains="memory chunk", step=Json({"gists": []}))  # applies to every match
    OpenAI(base_url=server.url, api_key="x").chat.completions.create(...)
    server.requests                                 # recorded request bodies
    server.stop()

As a separate process (end-to-end tests): ``python -m tests.fake_llm --port 0`` prints the port and
serves until killed; script it over HTTP (``POST /_script``, ``POST /_reset``, ``GET /_requests``)
with ``RemoteFakeLLM``, which has the same scripting API.
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx

MODEL_ID = "fake-llm"
DEFAULT_CHUNK_SIZE = 8
DONE = b"data: [DONE]\n\n"


@dataclass
class Reply:
    """Answer with ``text``; streamed in ``chunk_size`` pieces when the request streams."""

    text: str
    chunk_size: int = DEFAULT_CHUNK_SIZE
    delay_s: float = 0.0
    per_chunk_delay_s: float = 0.0
    usage: bool = True
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
    """Answer 200 with a body that is not valid JSON (or a stream whose event is not)."""

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


@dataclass
class _Script:
    """Queued steps, persistent routes and recorded requests, shared by the handler threads."""

    queue: deque[Step] = field(default_factory=deque)
    stream_queue: deque[Step] = field(default_factory=deque)  # taken by streamed requests only
    routes: list[tuple[str, Step]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each recorded request
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self, body: dict[str, Any]) -> Step | None:
        """Record the request, then pick its step: a matching route, else the queue head, else None."""
        text = conversation_text(body)
        with self.lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            for needle, step in self.routes:
                if needle in text:
                    return step
            if body.get("stream") and self.stream_queue:
                return self.stream_queue.popleft()
            return self.queue.popleft() if self.queue else None

    def reset(self) -> None:
        with self.lock:
            self.queue.clear()
            self.stream_queue.clear()
            self.routes.clear()
            self.requests.clear()
            self.arrivals.clear()


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


class _Exchange:
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
        """Dispatch on the step type."""
        if step is None:
            self.text(default_text(self.body))
        elif isinstance(step, Reply):
            self.text(step.text, step.chunk_size, step.delay_s, step.per_chunk_delay_s, step.usage)
        elif isinstance(step, Json):
            self.text(json.dumps(step.obj))
        elif isinstance(step, ToolCalls):
            self.tool_calls(step)
        elif isinstance(step, Error):
            self.error(step)
        elif isinstance(step, Garbage):
            self.garbage()
        elif isinstance(step, Cut):
            self.cut(step)
        elif isinstance(step, Hang):
            if not self.stop.wait(step.seconds):
                self.text(default_text(self.body))

    def text(self, text: str, chunk_size: int = DEFAULT_CHUNK_SIZE, delay_s: float = 0.0,
             per_chunk_delay_s: float = 0.0, usage: bool = True) -> None:
        if delay_s and self.stop.wait(delay_s):
            return
        pieces = _split(text, chunk_size)
        usage_obj = self._usage(len(pieces)) if usage else None
        if not self.stream:
            message = {"role": "assistant", "content": text}
            self._send_json(200, self._completion(message, "stop", usage_obj))
            return
        events = [{"role": "assistant", "content": ""}] + [{"content": piece} for piece in pieces]
        self._send_stream(events, "stop", usage_obj, per_chunk_delay_s)

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
        self._start(200, "text/event-stream")
        pieces = _split(step.text, step.chunk_size)[: step.after_chunks]
        for delta in [{"role": "assistant", "content": ""}] + [{"content": piece} for piece in pieces]:
            self._event(self._chunk(delta, None))
        # HTTP/1.0: closing the connection ends the body, just as a dropped connection would.

    def garbage(self) -> None:
        if self.stream:
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
                     per_chunk_delay_s: float) -> None:
        self._start(200, "text/event-stream")
        for index, delta in enumerate(deltas):
            # Pause between content chunks, not after the role-only opener: the first text arrives at once.
            if index > 1 and per_chunk_delay_s and self.stop.wait(per_chunk_delay_s):
                return
            self._event(self._chunk(delta, None))
        self._event(self._chunk({}, finish))
        if usage and (self.body.get("stream_options") or {}).get("include_usage"):
            self._event({**self._chunk({}, None), "choices": [], "usage": usage})
        self.handler.wfile.write(DONE)
        self.handler.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self.handler.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        self.handler.wfile.flush()

    def _send_json(self, status: int, payload: Any) -> None:
        self._send_raw(status, "application/json", json.dumps(payload).encode())

    def _send_raw(self, status: int, content_type: str, raw: bytes, headers: dict[str, str] | None = None) -> None:
        self._start(status, content_type, len(raw), headers)
        self.handler.wfile.write(raw)

    def _start(self, status: int, content_type: str, length: int | None = None,
               headers: dict[str, str] | None = None) -> None:
        self.handler.send_response(status)
        self.handler.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.handler.send_header(name, value)
        if length is not None:
            self.handler.send_header("Content-Length", str(length))
        self.handler.end_headers()


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so a stream ends when the socket closes.
    protocol_version = "HTTP/1.0"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "tests"}]})
        elif self.path == "/_requests":
            with self.server.script.lock:
                self._json(200, {"requests": list(self.server.script.requests)})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "request body is not JSON"}})
            return
        try:
            self._dispatch(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests); nothing left to answer

    def _dispatch(self, body: dict[str, Any]) -> None:
        script = self.server.script
        if self.path.rstrip("/") == "/v1/chat/completions":
            _Exchange(self, body, self.server.stop_event).answer(script.next_step(body))
        elif self.path == "/_script":
            with script.lock:
                script.queue.extend(step_from_dict(step) for step in body.get("steps", []))
                script.stream_queue.extend(step_from_dict(step) for step in body.get("stream_steps", []))
                if route := body.get("route"):
                    script.routes.append((route["contains"], step_from_dict(route["step"])))
            self._json(200, {"queued": len(script.queue)})
        elif self.path == "/_reset":
            script.reset()
            self._json(200, {"ok": True})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def _json(self, status: int, payload: Any) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.script = _Script()
        self.stop_event = threading.Event()


class FakeLLM:
    """The server, run in a background thread of the test process."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeLLM:
        """Bind and serve in a daemon thread; returns self."""
        self._server = _Server(self._address)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging answers, stop serving and close the socket."""
        if self._server is None:
            return
        self._server.stop_event.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    @property
    def port(self) -> int:
        return self._live.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for the openai client (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *steps: Step) -> None:
        """Queue steps; each chat request consumes one (routes first, default reply when empty)."""
        with self._live.script.lock:
            self._live.script.queue.extend(steps)

    def script_stream(self, *steps: Step) -> None:
        """Queue steps for streamed requests only (the user-facing reply, not the tie-breaker or memory calls)."""
        with self._live.script.lock:
            self._live.script.stream_queue.extend(steps)

    def route(self, contains: str, step: Step) -> None:
        """Answer every request whose messages contain ``contains`` with ``step`` (not consumed)."""
        with self._live.script.lock:
            self._live.script.routes.append((contains, step))

    def reset(self) -> None:
        """Forget queued steps, routes and recorded requests."""
        self._live.script.reset()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of the recorded chat-completion request bodies, oldest first."""
        with self._live.script.lock:
            return list(self._live.script.requests)

    @property
    def arrivals(self) -> list[float]:
        """``time.monotonic()`` when each recorded request arrived (same order as ``requests``)."""
        with self._live.script.lock:
            return list(self._live.script.arrivals)

    @property
    def _live(self) -> _Server:
        if self._server is None:
            raise RuntimeError("FakeLLM is not started")
        return self._server


class RemoteFakeLLM:
    """The scripting API of ``FakeLLM`` for a server running in another process."""

    def __init__(self, root_url: str, timeout_s: float = 5.0) -> None:
        self.root_url = root_url.rstrip("/")
        self._timeout_s = timeout_s

    @property
    def url(self) -> str:
        return f"{self.root_url}/v1"

    def script(self, *steps: Step) -> None:
        self._post("/_script", {"steps": [step_to_dict(step) for step in steps]})

    def script_stream(self, *steps: Step) -> None:
        self._post("/_script", {"stream_steps": [step_to_dict(step) for step in steps]})

    def route(self, contains: str, step: Step) -> None:
        self._post("/_script", {"route": {"contains": contains, "step": step_to_dict(step)}})

    def reset(self) -> None:
        self._post("/_reset", {})

    @property
    def requests(self) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.root_url}/_requests", timeout=self._timeout_s)
        response.raise_for_status()
        return response.json()["requests"]

    def _post(self, path: str, payload: dict[str, Any]) -> None:
        httpx.post(f"{self.root_url}{path}", json=payload, timeout=self._timeout_s).raise_for_status()


def main(argv: list[str] | None = None) -> None:
    """Serve until SIGTERM/SIGINT; prints the bound port on the first line."""
    parser = argparse.ArgumentParser(description="Scripted OpenAI-protocol server for tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeLLM(args.host, args.port).start()
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    print(server.port, flush=True)
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
