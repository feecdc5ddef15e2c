"""The one worker context of this process: built from the environment, installed once, shared by every job."""

from __future__ import annotations

import redis

from services.settings import Settings
from workers.context import WorkerContext, build_context


def context_from_environment(
    redis_client: redis.Redis | None = None, settings: Settings | None = None, *, load_models: bool = True
) -> WorkerContext:
    """Build the context and load the models (attaching to the embedded servers if no URLs are set)."""
    from workers.understanding import load_understanding

    settings = settings or Settings.from_env()
    if settings.uses_embedded:
        from services.embedded.servers import ensure_servers

        # The process stays attached until it exits; the servers' attach list skips dead processes.
        settings = ensure_servers(settings).apply(settings)
    context = build_context(settings, redis_client=redis_client)
    if load_models:
        load_understanding(context)
    return context


class _ProcessContext:
    """Holds the one context of this process; not created at import, only on first use."""

    context: WorkerContext | None = None


def install_context(context: WorkerContext | None) -> None:
    _ProcessContext.context = context


def current_context() -> WorkerContext:
    """The process's context, built from the environment on first use (plain ``rq worker``)."""
    if _ProcessContext.context is None:
        _ProcessContext.context = context_from_environment()
    return _ProcessContext.context
