"""Steps 1–4 of the digest job: topic, thread, session and the deterministic route.

The message is embedded once; the vector is reused by the topic classifier, the router's
exemplar similarity and the exchange's recall index.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from services.act.fastpath import answers_from_memory, only_tells
from services.act.list_edits import swapped_item
from services.act.models import list_holding
from services.embeddings import for_requests
from services.errors import EmbeddingError, LLMError
from services.llm.profile import history_window
from services.memory.context import AssembledContext, assemble
from services.memory.refusals import refused_in_message
from services.memory.untold import never_told
from services.queues import ChatRequest
from services.router.decision import RoutingDecision, apply_tiebreak, tiebreak_candidates
from services.router.missing import describe_missing
from services.router.signals import RoutingContext
from services.sessions import SESSION_IDLE_S, SessionStep, enqueue_episode, place_in_session
from services.threads import ThreadState, blended_topic_confidence, context_warmth, history_text, touch_thread
from services.topics import GENERAL, SEARCH_SETTINGS, CentroidUpdate, TopicResult
from workers.context import WorkerContext, act_config, llm_profile, memory_config

logger = logging.getLogger(__name__)
# The digest's understanding transaction: commits without waiting for the WAL flush, topic search ready.
# Not generic plans (plan_cache_mode): recall sets custom plans for its own statements anyway, and the
# topic search's generic plan sorts all of a user's topics where the custom one uses HNSW for a user
# with many (bench/pipeline.py, hot3).
TURN_SETTINGS = {"synchronous_commit": "off", **SEARCH_SETTINGS}



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
    embedding: np.ndarray | None = None
    embedding_model: str | None = None
    session_id: str | None = None
    context_text: str = ""  # recalled memory for the prompt; deliberately not part of the audit row
    # Under the compact profile, context_text in its two parts (services/memory/context.compact_split).
    about_text: str = ""
    note_text: str = ""
    recalled: list[dict[str, Any]] = field(default_factory=list)  # receipts of what context_text holds
    refused: frozenset[str] = frozenset()  # what the person never wants offered: a reply naming it is rewritten
    answer_in: str = ""  # the language the person asked to be answered in (the compact reply's instruction names it)
    clock24: bool = False  # the person asked for the 24-hour clock: a reply's "4:20 PM" is sent as "16:20"
    untold: str = ""  # what a question of recall asks about that the person never spoke of (services/memory/untold)
    # The thread as this turn found it (read once; the thread lease keeps it from changing under us).
    thread: ThreadState | None = None
    working_memory: list[dict[str, Any]] = field(default_factory=list)
    # The thread's confidence in ``topic`` after this turn: written with the turn's exchange (digest.remember).
    topic_confidence: float = 0.0
    # The matched topic's centroid after this message: moved after the reply by the storing run (digest.move_topic).
    topic_update: CentroidUpdate | None = None

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
            "recalled": self.recalled,
        }

    @classmethod
    def from_stored(cls, row: Any) -> Understanding:
        return cls(topic=row.topic, confidence=row.confidence, mode=row.mode)


def understand(context: WorkerContext, request: ChatRequest,
               snapshot: tuple[ThreadState, list[dict[str, Any]]]) -> Understanding:
    """Embed, classify the topic, place the session, recall, route (``snapshot``: the thread's state and working
    memory, which the digest read with the turn's request)."""
    profile = llm_profile(context)
    started = time.perf_counter()
    embedding = embed_once(context, request.text)
    embedded_s = time.perf_counter() - started
    state, working_memory = snapshot
    # Recall and placement share one short transaction: one BEGIN/COMMIT (and pool check-out) per turn.
    with context.sessions.begin() as db:
        now = dt.datetime.now(dt.UTC)
        # Its first statement touches the thread (before the session row that references it) and sets
        # the transaction up: no fsync at commit (thread, centroids, placement, access counts are derived
        # state: services.db.relaxed_commit says why that is safe) and the topic search's settings.
        touch_thread(db, request.user_id, request.thread_id, now, TURN_SETTINGS)
        remembered = recall_context(context, db, request, embedding, working_memory,
                                    started=state.started or now.timestamp())
        # A swap said with no list ("Nikos doesn't want headphones anymore, he wants a gaming mouse") changes the one
        # list of the person's holding the thing: the router, reading the words alone, hears news.
        swapped = swapped_item(request.text)
        untold = never_told(db, request.user_id, request.text) if profile.compact else ""
        swap = swapped is not None and list_holding(db, request.user_id, swapped) is not None
        placing = time.perf_counter()
        placement = classify_and_place(context, db, request, embedding, state, now)
        placed_s = time.perf_counter() - placing
    topic_update = placement[0].update
    topic, topic_confidence, topic_is_new, session_id = after_placement(context, request, state, *placement)
    context.metrics.observe("engram_classification_seconds", embedded_s + placed_s)
    routing_context = RoutingContext(
        text=request.text,
        embedding=embedding,
        working_memory=[(item.get("user", ""), item.get("reply", "")) for item in working_memory],
        context_warmth=context_warmth(state, time.time()),
        memory_confidence=remembered.confidence,
        topic_confidence=topic_confidence,
        topic_is_new=topic_is_new,
        previous_mode=state.last_mode,
        turns_since_previous_mode=max(1, state.turns_since_mode),
        pending_confirmation=bool(state.extra.get("pending_action")),
    )
    decision = route(context, request, routing_context, working_memory)
    mode = "ACT" if swap else decision.mode
    fast = profile.compact  # the small-model profile: plain requests take the fast path
    if mode == "ACT" and fast and not swap and (answers_from_memory(request.text, decision.signals)
                                                or only_tells(decision.signals)):
        mode = "RESPOND"  # the notes hold what recall would find; a statement needs no plan (services/act/fastpath)
    return Understanding(
        topic=topic,
        confidence=decision.confidence,
        mode=mode,
        scores=decision.scores,
        signals={
            **decision.signals,
            "topic_confidence": round(topic_confidence, 4),
            "missing": describe_missing(decision.signals),
            **({"answered_from_memory": 1.0} if mode == "RESPOND" != decision.mode else {}),
            **({"skill_list": 1.0, "swap_on_a_list": 1.0} if swap else {}),
        },
        context_text=remembered.text,
        about_text=remembered.about,
        note_text=remembered.note,
        recalled=remembered.receipts,
        refused=remembered.refused | refused_in_message(request.text),
        answer_in=remembered.answer_in,
        clock24=remembered.clock24,
        untold=untold,
        margin=decision.margin,
        tiebreaker_used=decision.tiebreaker_used,
        tiebreaker_result=decision.tiebreaker_result,
        latency_ms=decision.latency_ms,
        weights_version=decision.weights_version,
        embedding=embedding,
        embedding_model=for_requests(context.embedder).model_id if embedding is not None and context.embedder else None,
        session_id=session_id,
        thread=state,
        working_memory=working_memory,
        topic_confidence=topic_confidence,
        topic_update=topic_update,
    )


def embed_once(context: WorkerContext, text: str) -> np.ndarray | None:
    """The message's embedding, or None when the embedder is missing or fails (topic → general)."""
    if context.embedder is None:
        return None
    try:
        return for_requests(context.embedder).embed(text)  # routed and classified, not kept as memory
    except EmbeddingError:
        logger.warning("embedding failed; classifying as %s with low confidence", GENERAL, exc_info=True)
        return None


def classify_and_place(
    context: WorkerContext, db: Session, request: ChatRequest, embedding: np.ndarray | None, state: ThreadState,
    now: dt.datetime,
) -> tuple[TopicResult, SessionStep, list[int]]:
    """Topic (with centroid update) and session, in the caller's transaction (opened with ``TURN_SETTINGS``);
    the closed session's exchanges."""
    # The centroid moves after the reply (digest.move_topic).
    result = context.topics.classify(db, request.user_id, request.text, embedding, state.topic)
    step = place_in_session(
        db, request.user_id, request.thread_id, result.topic, switched=result.switched, now=now,
        idle_after_s=SESSION_IDLE_S,
    )
    return result, step, list(step.closed_exchange_ids)


def after_placement(
    context: WorkerContext, request: ChatRequest, state: ThreadState, result: TopicResult, step: SessionStep,
    closed_ids: list[int],
) -> tuple[str, float, bool, str]:
    """Once placement is committed: queue the closed session's episode, blend the thread's topic confidence
    (written with the exchange, not now: one round trip less before the reply)."""
    if step.closed_session_id and closed_ids:
        enqueue_episode(context.redis, step.closed_session_id, closed_ids, request.user_id)
    blended = blended_topic_confidence(state, result.topic, result.confidence)
    return result.topic, blended, result.is_new, step.session_id


def route(
    context: WorkerContext, request: ChatRequest, routing_context: RoutingContext, working_memory: list[dict[str, Any]]
) -> RoutingDecision:
    """The deterministic decision; the LLM tie-breaker only for a close call."""
    decision = context.router.route(routing_context)
    if decision.tiebreak_eligible:
        decision = tiebreak(context, request, decision, working_memory)
    context.metrics.observe("engram_routing_seconds", decision.latency_ms / 1000)
    return decision


def recall_context(
    context: WorkerContext, db: Session, request: ChatRequest, embedding: np.ndarray | None,
    working_memory: list[dict[str, Any]], started: float,
) -> AssembledContext:
    """What the person's memory holds that bears on this message (working memory excluded: it is the history)."""
    recent_ids = [item["exchange_id"] for item in working_memory]
    config, budget, note_tokens, shown, known_at = memory_config(context), None, None, [], None
    profile = llm_profile(context)
    if profile.compact:
        budgets = profile.budgets
        config = replace(config, context=replace(config.context, max_exchanges=budgets.memory_turns,
                                                 max_episodes=budgets.memory_episodes,
                                                 profile_facts=budgets.person_facts, profile_min_salience=0.0))
        budget, note_tokens = budgets.memory_tokens, budgets.recalled_tokens
        shown = [item["exchange_id"] for item in history_window(working_memory, budgets)]
        # The block about the person as it stood when the thread began: the same on every turn of it.
        known_at = dt.datetime.fromtimestamp(started, dt.UTC)
    # The message is embedded once: without a vector, recall runs on full text alone.
    embedder = context.embedder if embedding is not None else None
    return assemble(
        db, embedder, request.user_id, request.text, query_embedding=embedding,
        exclude_exchange_ids=recent_ids, config=config, budget_tokens=budget, beside=True,
        compact=profile.compact, shown_exchange_ids=shown, note_tokens=note_tokens, known_at=known_at,
    )


def tiebreak(
    context: WorkerContext, request: ChatRequest, decision: RoutingDecision, working_memory: list[dict[str, Any]]
) -> RoutingDecision:
    """Ask the LLM between the top two modes; any failure keeps the deterministic winner."""
    first, second = tiebreak_candidates(decision)
    prompt = context.prompts.render(
        "tiebreaker", candidates=f"{first} or {second}", history=history_text(working_memory[-3:]),
        message=request.text,
    )
    try:
        completion = context.llm.complete("tiebreaker", [{"role": "user", "content": prompt}])
    except LLMError as exc:
        logger.info("tie-breaker failed (%s); keeping %s", type(exc).__name__, decision.mode)
        return apply_tiebreak(decision, None)
    return apply_tiebreak(decision, completion.text.split()[0] if completion.text.split() else None)


def load_understanding(context: WorkerContext) -> None:
    """Load the embedding model, router exemplars and topic classifier once for this process."""
    from services.embeddings import load_embedder
    from services.router.mode_router import ModeRouter
    from services.topics import TopicClassifier, TopicConfig

    context.embedder = load_embedder(context.settings.embedder, graph_dir=context.settings.models_dir)
    context.router = ModeRouter(context.settings.configs_dir, context.embedder)
    context.topics = TopicClassifier(TopicConfig.load(context.settings.configs_dir))
    memory_config(context)  # read configs/memory.toml and act.toml now, not on the first chat
    act_config(context)
    logger.info("models loaded: %s (memory: %s)", for_requests(context.embedder).model_id, context.embedder.model_id)
