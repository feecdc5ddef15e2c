"""gunicorn entry point: ``gunicorn 'api.wsgi:make_app()'``."""

from __future__ import annotations

from flask import Flask

from api import create_app
from services.logs import configure_logging
from services.settings import Settings


def make_app() -> Flask:
    settings = Settings.from_env()
    configure_logging(settings.log_level, role="web")
    app = create_app(settings)
    app.extensions["engram"].fanout.start()
    return app
