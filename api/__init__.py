"""Flask app factory: wiring only; the views live in their blueprints."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from flask import Flask
from sqlalchemy.engine import Engine
from werkzeug.exceptions import NotFound
from werkzeug.routing import IntegerConverter

from api.health import LLMProbe
from services.connections import redis_client
from services.db import make_engine, make_sessionmaker
from services.fanout import FanOut
from services.limits import RateLimiter, load_limits
from services.metrics import Metrics
from services.migrate import head_revision
from services.settings import Settings
from services.streams import EventLog
from services.threads import ThreadStore

BIGINT_MAX = 2**63 - 1


class RowId(IntegerConverter):
    """``<row_id:name>``: a row id; one no bigint column can hold is a 404, never a 500 from PostgreSQL.

    Raised here rather than by ``max=``: a value the converter rejects makes the rule not match,
    and a PATCH or DELETE would then answer 405 instead of 404.
    """

    def to_python(self, value: str) -> int:
        number = int(super().to_python(value))
        if not 1 <= number <= BIGINT_MAX:
            raise NotFound(f"nothing has id {value}")
        return number


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
        # Brief retries: a restarted Redis is reconnected to, one that is down is a 503, not a hung request.
        client = redis_client(settings.redis_url, patient=False, max_connections=1000)
        metrics = Metrics(client)
        return cls(
            settings=settings,
            redis=client,
            engine=make_engine(settings.database_url),
            events=EventLog(client, ttl_s=settings.events_ttl_s),
            fanout=FanOut(client, on_change=metrics.set_open_streams, min_report_s=1.0),
            threads=ThreadStore(client),
            metrics=metrics,
            schema_head=head_revision(),
            llm_probe=LLMProbe(settings.openai_base_url, connection=client),
        )


def create_app(settings: Settings, deps: WebDeps | None = None) -> Flask:
    """Build the Flask app; tests pass their own settings and dependencies."""
    from api import chat, errors, events, health, memory, ops, opsdata, pages, reminders, threads

    app = Flask(__name__, static_folder=None)
    app.url_map.converters["row_id"] = RowId  # before the blueprints add their rules
    deps = deps or WebDeps.build(settings)
    app.extensions["engram"] = deps
    app.extensions["engram.sessions"] = make_sessionmaker(deps.engine)
    app.extensions["engram.limits"] = load_limits(settings.configs_dir)
    app.extensions["engram.limiter"] = RateLimiter(deps.redis)
    # Bodies larger than this are refused before parsing (413); the text limit is checked after.
    # Query strings are bounded by the server (gunicorn's request line limit) and by limits.toml.
    app.config["MAX_CONTENT_LENGTH"] = settings.max_text_chars * 4 + 64 * 1024
    app.config["MAX_FORM_MEMORY_SIZE"] = app.config["MAX_CONTENT_LENGTH"]
    errors.init_app(app)
    for blueprint in (chat.bp, events.bp, health.bp, memory.bp, ops.bp, opsdata.bp, pages.bp, reminders.bp, threads.bp):
        app.register_blueprint(blueprint)
    return app
