"""Helpers for the browser suite: Debian's Chromium under Playwright, and a proxy that can cut connections."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium_path() -> str | None:
    """The system Chromium (installed by .ci/run from Debian's packages), or None."""
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


@contextmanager
def chromium() -> Iterator[object]:
    """A headless system Chromium driven by Playwright (no browser download, runs as root)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("Chromium is not installed: `apt-get install -y chromium` (.ci/run does it)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        browser = playwright.chromium.launch(executable_path=path, headless=True,
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


# Markdown sources and the exact HTML the page's renderer must make of them.
MARKDOWN_CASES = [
    ("<b>bold?</b>", "<p>&lt;b&gt;bold?&lt;/b&gt;</p>"),
    ("**sure** and *fine*", "<p><strong>sure</strong> and <em>fine</em></p>"),
    ("[ok](https://example.org/a?b=1&c=2)",
     '<p><a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer" target="_blank">ok</a></p>'),
    ("[bad](javascript:alert(1))", "<p>[bad](javascript:alert(1))</p>"),
    ("[bad](//evil.example)", "<p>[bad](//evil.example)</p>"),
    ("[bad](/\\evil.example)", "<p>[bad](/\\evil.example)</p>"),
    ('[x](https://a.example/" onclick="alert(1))', '<p>[x](https://a.example/&quot; onclick=&quot;alert(1))</p>'),
    ("- one\n- <i>two</i>", "<ul><li>one</li><li>&lt;i&gt;two&lt;/i&gt;</li></ul>"),
    ("```\n<script>x</script>\n```", "<pre><code>&lt;script&gt;x&lt;/script&gt;</code></pre>"),
    ("`<tag>` here", "<p><code>&lt;tag&gt;</code> here</p>"),
]


def send(page, text_: str) -> None:  # type: ignore[no-untyped-def]
    """Type a message and press Enter, as a person would."""
    page.fill("#message", text_)
    page.press("#message", "Enter")


def last_reply(page):  # type: ignore[no-untyped-def]
    return page.locator(".bubble.engram").last


def wait_reply_done(page) -> str:  # type: ignore[no-untyped-def]
    page.wait_for_selector("#log .turn:last-child .bubble.engram:not(.streaming)")
    return last_reply(page).inner_text()


def new_conversation(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/")
    page.click("#new-thread")
    page.wait_for_selector("#thread-list button[aria-current=true] >> text=New conversation")
    page.wait_for_selector("#log .empty")


class CuttableProxy:
    """A TCP proxy in front of the web server; ``cut()`` drops every open connection, as a network would.

    The browser talks to Engram through it, so a test can break a stream mid-reply and watch
    the page re-attach. Request heads are recorded to check what the page sent on re-attach.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.request_heads: list[str] = []
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> int:
        """Close every connection open right now; returns how many sockets were closed."""
        with self._lock:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _close(sock)
        return len(sockets)

    def close(self) -> None:
        self._closed = True
        _close(self.listener)
        self.cut()

    def heads_matching(self, text: str) -> list[str]:
        with self._lock:
            return [head for head in self.request_heads if text in head]

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open.update((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, from_client: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if from_client and data[:8].split(b" ")[0] in (b"GET", b"POST", b"PATCH", b"DELETE", b"PUT"):
                    with self._lock:
                        self.request_heads.append(data.split(b"\r\n\r\n")[0].decode("latin-1"))
                target.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(target)
            with self._lock:
                self._open.discard(source)
                self._open.discard(target)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
