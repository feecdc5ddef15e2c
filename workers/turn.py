"""What one digest run carries between its steps (understand → generate → store), and how it publishes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from services.queues import ChatRequest
from services.supervisor import beat
from workers.context import WorkerContext

# Publishing is progress: the supervisor's hang check sees a beat at most this often.
BEAT_EVERY_S = 5.0


@dataclass
class Turn:
    """What one digest run carries between its steps."""

    request: ChatRequest
    channel: str
    started: float = field(default_factory=time.monotonic)
    timings: dict[str, float] = field(default_factory=dict)
    last_beat: float = 0.0
    # (key, value) the run's events are fenced with (services.queues.attempt_fence); None: unfenced.
    fence: tuple[str, str] | None = None
    # The turn's chat-priority mark (services.llm.priority) is set and not yet cleared.
    in_flight: bool = False

    def publish(self, context: WorkerContext, event: str, data: dict[str, Any]) -> str:
        self._beat(context)
        return context.events.publish(self.channel, event, data, fence=self.fence)

    def publish_all(self, context: WorkerContext, events: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Several events in order, in one round trip."""
        self._beat(context)
        return context.events.publish_all(self.channel, events, fence=self.fence)

    def _beat(self, context: WorkerContext) -> None:
        # Publishing is progress: beat for the supervisor's hang check, but not on every token.
        if time.monotonic() - self.last_beat >= BEAT_EVERY_S:
            beat(context.redis)
            self.last_beat = time.monotonic()

    def mark(self, name: str, seconds: float) -> None:
        self.timings[name] = round(seconds, 4)
