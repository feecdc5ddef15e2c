"""Steps 1–4 of the digest job: topic, thread, session and the deterministic route."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.queues import ChatRequest
from workers.context import WorkerContext

DEFAULT_TOPIC = "general"


@dataclass
class Understanding:
    topic: str
    confidence: float
    mode: str
    scores: dict[str, float] = field(default_factory=dict)
    signals: dict[str, Any] = field(default_factory=dict)
    margin: float = 0.0
    tiebreaker_used: bool = False
    tiebreaker_result: str | None = None
    latency_ms: float = 0.0
    weights_version: str | None = None

    def decision_row(self, request: ChatRequest) -> dict[str, Any]:
        """Column values for the ``routing_decisions`` audit row."""
        return {
            "request_id": request.request_id,
            "user_id": request.user_id,
            "thread_id": request.thread_id,
            "mode": self.mode,
            "confidence": self.confidence,
            "scores": self.scores,
            "signals": self.signals,
            "margin": self.margin,
            "tiebreaker_used": self.tiebreaker_used,
            "tiebreaker_result": self.tiebreaker_result,
            "latency_ms": self.latency_ms,
            "weights_version": self.weights_version,
        }

    @classmethod
    def from_stored(cls, row: Any) -> Understanding:
        return cls(topic=row.topic, confidence=row.confidence, mode=row.mode)


def understand(context: WorkerContext, request: ChatRequest) -> Understanding:
    """Every message is answered in RESPOND mode until the classifier and router are loaded."""
    return Understanding(topic=DEFAULT_TOPIC, confidence=0.0, mode="RESPOND", signals={"router": "RESPOND only"})


def load_understanding(context: WorkerContext) -> None:
    """Nothing to load before the classifier and router exist."""
