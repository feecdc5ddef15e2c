"""gunicorn entry point: ``gunicorn 'api.wsgi:make_app()'``."""

from __future__ import annotations

import gc
import ipaddress

import psutil
from flask import Flask

from api import create_app
from services.logs import configure_logging
from services.settings import Settings, SettingsError


def make_app() -> Flask:
    settings = Settings.from_env()
    configure_logging(settings.log_level, role="web")
    refuse_public_listeners_without_tokens(settings)
    app = create_app(settings)
    app.extensions["engram"].fanout.start()
    # Everything built so far (modules, the app, its clients) lives as long as the process. Frozen, the
    # collector stops walking it: a full collection of those ~100k+ objects took 65-250 ms, and in a
    # gevent process that pause holds every open stream (bench/load.py saw a 200-300 ms delivery tail).
    gc.freeze()
    return app


def refuse_public_listeners_without_tokens(settings: Settings) -> None:
    """ENGRAM_HOST is checked with the settings, but gunicorn's ``-b`` decides where this process listens:
    look at the sockets it really accepts on, so ``-b 0.0.0.0:8080`` without tokens is refused too."""
    if settings.api_tokens:
        return
    public = sorted({f"{conn.laddr.ip}:{conn.laddr.port}" for conn in psutil.Process().net_connections(kind="inet")
                     if conn.status == psutil.CONN_LISTEN and not ipaddress.ip_address(conn.laddr.ip).is_loopback})
    if public:
        raise SettingsError(f"refusing to listen on {', '.join(public)} without authentication: set "
                            "ENGRAM_API_TOKENS (token:user,...) or bind to 127.0.0.1")
