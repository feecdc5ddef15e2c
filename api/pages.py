"""The built-in pages: a chat page at / and the ops page at /ops."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory

from services.settings import PROJECT_ROOT

bp = Blueprint("pages", __name__)
WEB_DIR = PROJECT_ROOT / "web"


@bp.get("/")
def chat_page() -> Response:
    return send_from_directory(WEB_DIR, "chat.html")


@bp.get("/ops")
def ops_page() -> Response:
    return send_from_directory(WEB_DIR, "ops.html")
