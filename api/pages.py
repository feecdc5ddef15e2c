"""The built-in pages: chat at /, memory at /memory, ops at /ops, and their static files."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory

from services.settings import PROJECT_ROOT

bp = Blueprint("pages", __name__)
WEB_DIR = PROJECT_ROOT / "web"
# The pages hold no secrets (data comes from the authenticated JSON routes), but they must not
# load anything from elsewhere: the policy makes any such attempt fail loudly in the browser.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _page(name: str) -> Response:
    response = send_from_directory(WEB_DIR, name)
    response.headers.update(PAGE_HEADERS)
    response.cache_control.no_cache = True
    return response


@bp.get("/")
def chat_page() -> Response:
    return _page("chat.html")


@bp.get("/memory")
def memory_page() -> Response:
    return _page("memory.html")


@bp.get("/ops")
def ops_page() -> Response:
    return _page("ops.html")


@bp.get("/static/<path:name>")
def static_file(name: str) -> Response:
    """Scripts and styles of the pages (send_from_directory refuses paths outside web/static)."""
    response = send_from_directory(WEB_DIR / "static", name)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.cache_control.no_cache = True
    return response
