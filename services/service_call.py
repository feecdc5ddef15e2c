"""What every periodic service is: a function of one call that says how it went.

``configs/schedules.toml`` names each service's function by dotted path; the periodic runner
job builds a ``ServiceCall`` (the worker's context plus a clock tests can set), calls the
function and records the ``ServiceResult`` once per fire in ``service_runs`` and in metrics.
A service is idempotent: running it twice for one fire changes nothing the second time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import redis
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from services.embeddings import Embedder
    from services.llm.client import LLMClient
    from services.metrics import Metrics
    from services.prompts import PromptLibrary
    from services.router.mode_router import ModeRouter
    from services.settings import Settings
    from services.streams import EventLog
    from services.threads import ThreadStore
    from services.topics import TopicClassifier



@dataclass
class WorkerContext:
    """A worker process's connections, clients and models, built once (``workers.context.build_context``) and
    carried by every job's and service's call: defined here, below both, so services need not know the workers."""

    settings: Settings
    redis: redis.Redis
    engine: Engine
    sessions: sessionmaker[Session]
    events: EventLog
    threads: ThreadStore
    metrics: Metrics
    llm: LLMClient
    prompts: PromptLibrary
    # Loaded once per process by workers.understanding.load_understanding (None in the web process).
    embedder: Embedder | None = None
    router: ModeRouter | None = None
    topics: TopicClassifier | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        self.metrics.flush()  # what deferred() blocks recorded in this process's last second
        self.engine.dispose()
        self.redis.close()


Outcome = Literal["ran", "skipped", "failed"]


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ServiceResult:
    outcome: Outcome
    reason: str = ""  # why it skipped (the gate's reason) or failed; empty when it ran
    details: dict[str, Any] = field(default_factory=dict)  # counts worth showing (fired=3, thoughts=0)

    @classmethod
    def ran(cls, **details: Any) -> ServiceResult:
        return cls("ran", "", details)

    @classmethod
    def skipped(cls, reason: str, **details: Any) -> ServiceResult:
        return cls("skipped", reason, details)


@dataclass
class ServiceCall:
    name: str  # the service's name in configs/schedules.toml
    fire_id: str  # one id per scheduled fire (or per manual run): the idempotency key
    context: WorkerContext  # connections, clients, configs and models of the worker process
    clock: Callable[[], datetime] = system_clock  # timezone-aware UTC "now"; tests pass their own
    options: dict[str, Any] = field(default_factory=dict)  # the service's own keys in schedules.toml

    def option(self, key: str, default: Any) -> Any:
        """An option from the service's schedules.toml table, of the default's type."""
        value = self.options.get(key, default)
        return type(default)(value) if default is not None else value

    def now(self) -> datetime:
        return self.clock()


ServiceFunction = Callable[[ServiceCall], ServiceResult]
