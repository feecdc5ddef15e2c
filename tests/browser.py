"""Helpers for the browser suite: Debian's Chromium under Playwright, and what a person does on a page."""

from __future__ import annotations

import shutil
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
