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
import json
import signal
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tests.llm_steps import Step, step_from_dict, step_to_dict
from tests.openai_wire import MODEL_ID, Exchange, conversation_text


@dataclass
class _Script:
    """Queued steps, persistent routes and recorded requests, shared by the handler threads."""

    queue: deque[Step] = field(default_factory=deque)
    stream_queue: deque[Step] = field(default_factory=deque)  # taken by streamed requests only
    routes: list[tuple[str, Step]] = field(default_factory=list)
    # Steps for the requests that contain a needle, consumed in order (one conversation's turns), then gone.
    once: list[tuple[str, deque[Step]]] = field(default_factory=list)
    default: Step | None = None  # the answer when nothing else applies (None: the echo of openai_wire)
    record: bool = True  # keep request bodies (a long soak would keep hundreds of megabytes)
    requests: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each recorded request
    authorizations: list[str | None] = field(default_factory=list)  # the Authorization header of each
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self, body: dict[str, Any], authorization: str | None = None) -> Step | None:
        """Record the request, then pick its step: a matching route, else the queue head, else None."""
        text = conversation_text(body)
        with self.lock:
            if self.record:
                self.requests.append(body)
                self.arrivals.append(time.monotonic())
                self.authorizations.append(authorization)
            for index, (needle, steps) in enumerate(self.once):
                if needle in text:
                    step = steps.popleft()
                    if not steps:
                        del self.once[index]
                    return step
            for needle, step in self.routes:
                if needle in text:
                    return step
            if body.get("stream") and self.stream_queue:
                return self.stream_queue.popleft()
            return self.queue.popleft() if self.queue else self.default

    def reset(self) -> None:
        with self.lock:
            self.queue.clear()
            self.stream_queue.clear()
            self.routes.clear()
            self.once.clear()
            self.default = None
            self.requests.clear()
            self.arrivals.clear()
            self.authorizations.clear()


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 with keep-alive, as a real endpoint speaks: the client's pooled connection serves the
    # next request (streams are chunked; tests/openai_wire.py closes the connection on a cut).
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # As real endpoints (uvicorn, nginx) do: with Nagle on, a stream's second small write waits for
        # the client's delayed ACK of the first (~40 ms) once a kept-alive connection leaves quick-ACK mode.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection)

    def finish(self) -> None:
        self.server.untrack(self.connection)
        super().finish()

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
            step = script.next_step(body, self.headers.get("Authorization"))
            Exchange(self, body, self.server.stop_event).answer(step)
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
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.connections_opened = 0

    def track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)
            self.connections_opened += 1

    def untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-request is what the fault tests do on purpose (socketserver would print the
        # traceback to stderr from a request thread, outside any test's capture); anything else is still shown.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)

    def drop_connections(self) -> None:
        """Close every kept-alive connection: a stopped server must not answer on an idle pooled socket."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the client


class FakeLLM:
    """The server, run in a background thread of the test process."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, record: bool = True) -> None:
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._record = record

    def start(self) -> FakeLLM:
        """Bind and serve in a daemon thread; returns self."""
        self._server = _Server(self._address)
        self._server.script.record = self._record
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
        self._server.drop_connections()
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

    def route_once(self, contains: str, *steps: Step) -> None:
        """Answer the next requests that contain ``contains`` with ``steps``, one each, in order (before routes)."""
        with self._live.script.lock:
            self._live.script.once.append((contains, deque(steps)))

    def set_default(self, step: Step | None) -> None:
        """Answer with ``step`` whatever nothing else answers (None: the echo)."""
        with self._live.script.lock:
            self._live.script.default = step

    def reset(self) -> None:
        """Forget queued steps, routes and recorded requests."""
        self._live.script.reset()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of the recorded chat-completion request bodies, oldest first."""
        with self._live.script.lock:
            return list(self._live.script.requests)

    @property
    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of each recorded request (same order as ``requests``)."""
        with self._live.script.lock:
            return list(self._live.script.authorizations)

    @property
    def arrivals(self) -> list[float]:
        """``time.monotonic()`` when each recorded request arrived (same order as ``requests``)."""
        with self._live.script.lock:
            return list(self._live.script.arrivals)

    @property
    def connections_opened(self) -> int:
        """How many TCP connections clients have opened so far (kept-alive ones serve many requests)."""
        return self._live.connections_opened

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
