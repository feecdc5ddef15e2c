"""Deterministic mode router: signals → per-mode linear scores → decision, no LLM call.

Weights come from ``configs/router.toml``, exemplar sentences per mode from
``configs/router_exemplars.toml``; both are read (and the exemplars embedded) once, when the router is built.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from services.embeddings import Embedder, for_requests
from services.router.config import WEIGHTS_FILE, RouterConfig, load_router_config
from services.router.decision import RoutingDecision, ranked, score_modes, softmax
from services.router.exemplars import EXEMPLARS_FILE, SIM_SIGNALS, ExemplarIndex, load_exemplars
from services.router.signals import RoutingContext, collect_signals

logger = logging.getLogger(__name__)


def context_from_record(text: str, context: Mapping[str, Any] | None = None,
                        embedding: np.ndarray | None = None) -> RoutingContext:
    """Build a context from a JSON-like record (routing set, ``engram route --file``); warmth defaults from history."""
    context = context or {}
    memory = [(str(user), str(reply)) for user, reply in context.get("working_memory", [])]
    return RoutingContext(
        text=text,
        embedding=embedding,
        working_memory=memory,
        context_warmth=float(context.get("context_warmth", min(1.0, len(memory) / 3))),
        memory_confidence=float(context.get("memory_confidence", 0.0)),
        topic_confidence=float(context.get("topic_confidence", 0.5 if memory else 0.0)),
        topic_is_new=bool(context.get("topic_is_new", not memory)),
        previous_mode=context.get("previous_mode"),
        turns_since_previous_mode=int(context.get("turns_since_previous_mode", 1)),
        pending_confirmation=bool(context.get("pending_confirmation", False)),
    )


class ModeRouter:
    """Routes a message to RESPOND / CLARIFY / ACKNOWLEDGE / ACT / IGNORE from its signals."""

    def __init__(self, configs_dir: Path, embedder: Embedder | None = None) -> None:
        configs_dir = Path(configs_dir)
        # Messages and exemplars are embedded here and kept nowhere: the faster graph of a pair.
        embedder = for_requests(embedder) if embedder is not None else None
        self.embedder = embedder
        self.config: RouterConfig = load_router_config(configs_dir / WEIGHTS_FILE)
        self.exemplars = None
        if embedder is not None:
            self.exemplars = ExemplarIndex.build(load_exemplars(configs_dir / EXEMPLARS_FILE), embedder)

    def route(self, ctx: RoutingContext) -> RoutingDecision:
        """Score every mode for ``ctx``; uses ``ctx.embedding`` as given and never embeds by itself."""
        started = time.perf_counter()
        config = self.config
        signals = collect_signals(ctx, config.recent_turns)
        signals.update(self._similarities(ctx.embedding, config.exemplar_top_k))
        # Most signals are 0/1 flags, which rounding leaves as they are.
        signals = {name: value if value == 0.0 or value == 1.0 else round(value, 4) for name, value in signals.items()}
        scores = score_modes(signals, config.weights)
        probabilities = softmax(scores, config.temperature)
        first, second = ranked(scores)[:2]
        margin = round(scores[first] - scores[second], 4)
        return RoutingDecision(
            mode=first,
            confidence=probabilities[first],
            scores=scores,
            probabilities=probabilities,
            signals=signals,
            margin=margin,
            tiebreak_eligible=margin < config.tiebreak_threshold(ctx.context_warmth),
            latency_ms=round((time.perf_counter() - started) * 1000, 4),
            weights_version=config.version,
            deterministic_mode=first,
            embedding_model=self.exemplars.model_id if self.exemplars and signals["embedding_used"] else None,
        )

    def route_text(self, text: str, context: Mapping[str, Any] | None = None) -> RoutingDecision:
        """Embed ``text`` with the router's embedder (if any) and route it; for CLIs and tests."""
        embedding = self.embedder.embed(text) if self.embedder is not None and text.strip() else None
        return self.route(context_from_record(text, context, embedding))

    def _similarities(self, embedding: np.ndarray | None, top_k: int) -> dict[str, float]:
        sims = dict.fromkeys(SIM_SIGNALS.values(), 0.0)
        usable = self.exemplars is not None and embedding is not None
        if usable and embedding.shape != (self.exemplars.matrix.shape[1],):
            logger.warning("embedding shape %s does not match exemplars %s; ignoring it",
                           embedding.shape, self.exemplars.matrix.shape)
            usable = False
        if usable:
            sims.update(self.exemplars.similarities(np.asarray(embedding, dtype=np.float32), top_k))
        sims["embedding_used"] = 1.0 if usable else 0.0
        return sims
