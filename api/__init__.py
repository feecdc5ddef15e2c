"""Flask app factory: wiring only; the views live in their blueprints."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from flask import Flask
from sqlalchemy.engine import Engine

from api.health import LLMProbe
from services.db import make_engine, make_sessionmaker
from services.metrics import Metrics
from services.migrate import head_revision
from services.settings import Settings
from services.streams import EventLog, FanOut
from services.threads import ThreadStore


@dataclass
class WebDeps:
    """Everything the views need, built once per web process by the entrypoint."""

    settings: Settings
    redis: redis.Redis
    engine: Engine
    events: EventLog
    fanout: FanOut
    threads: ThreadStore
    metrics: Metrics
    schema_head: str | None  # newest migration, read once: /healthz compares the database with it
    llm_probe: LLMProbe

    @classmethod
    def build(cls, settings: Settings) -> WebDeps:
        if not settings.redis_url or not settings.database_url:
            raise ValueError("the web process needs REDIS_URL and DATABASE_URL (engram run sets them)")
        # One pool for the process, sized for gevent: streams share the fan-out connection,
        # but replays and status reads borrow from here.
        client = redis.Redis.from_url(settings.redis_url, max_connections=1000)
        metrics = Metrics(client)
        return cls(
            settings=settings,
            redis=client,
            engine=make_engine(settings.database_url),
            events=EventLog(client, ttl_s=settings.events_ttl_s),
            fanout=FanOut(client, on_change=metrics.set_open_streams),
            threads=ThreadStore(client, ttl_s=settings.thread_ttl_s),
            metrics=metrics,
            schema_head=head_revision(),
            llm_probe=LLMProbe(settings.openai_base_url, background_url=settings.background_llm_url,
                               connection=client),
        )


def create_app(settings: Settings, deps: WebDeps | None = None) -> Flask:
    """Build the Flask app; tests pass their own settings and dependencies."""
    from api import chat, errors, events, health, memory, pages

    app = Flask(__name__, static_folder=None)
    deps = deps or WebDeps.build(settings)
    app.extensions["engram"] = deps
    app.extensions["engram.sessions"] = make_sessionmaker(deps.engine)
    # Bodies larger than this are refused before parsing (413); the text limit is checked after.
    app.config["MAX_CONTENT_LENGTH"] = settings.max_text_chars * 4 + 64 * 1024
    errors.init_app(app)
    for blueprint in (chat.bp, events.bp, health.bp, memory.bp, pages.bp):
        app.register_blueprint(blueprint)
    return app
