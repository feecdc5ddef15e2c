"""The memory chunker (memory-chunker-queue): one job per stored exchange.

Reads the exchange with some world state (time, earlier turns, related known facts), asks the
``memory_chunker`` LLM role for a JSON chunk, validates it and stores it with the exchange's
facts in one transaction. Invalid output after one retry → the exchange stays stored without
enrichment, a ``failed`` chunk row and a counter record it. Transient LLM failures re-run the
job later (``enqueue_in``; the scheduler role enqueues it when due). A retried job stores nothing twice.

A chat turn's exchange is stored lean (no lines, no vector: migration 0015); the job's first
transaction derives its lines and stores its turn's vector, before the LLM is asked.
The same workers (they hold the embedding model) run the vector backfill (``fill_vectors``): the
vectors of imported exchanges, which ``engram import`` stores without, and of chat turns whose
chunker job never ran (services/memory/vectors.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from typing import Any

from rq import Queue, get_current_job
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.db import Exchange
from services.embeddings import Embedder
from services.errors import LLMError, LLMMalformedOutput
from services.llm.completion import Completion
from services.memory import person_index, turns, vectors, vocabulary
from services.memory.chunks import (
    CHUNK_SCHEMA,
    ChunkInvalid,
    ask_validated,
    chunk_exists,
    store_chunk,
    store_failure,
    validate_chunk,
)
from services.memory.config import MemoryConfig
from services.memory.from_words import UNNAMED, chunk_from_lines, chunk_from_words
from services.memory.models import Fact
from services.memory.search import prepare_vector_search
from services.queues import (
    CHUNK_JOB_ID,
    CHUNKER_JOB,
    MEMORY_CHUNKER_QUEUE,
    RETRY_JOB_ID,
    memory_job_options,
    owner_meta,
    replace_failed,
)
from services.zones import user_zone
from workers.context import WorkerContext, llm_profile, memory_config
from workers.process import current_context

logger = logging.getLogger(__name__)

FAILURES_METRIC = "engram_memory_enrichment_failures_total"
PROMPT = "memory-chunker"
ROLE = "memory_chunker"
WORDS_MODEL = "words"  # the chunk's model when it was read from the person's sentences (chunk_from_words)
BACKFILL_BUDGET_S = 30.0  # then the backfill job queues its continuation: enrichment jobs on this queue get a turn
BACKFILL_LOOPS: int | None = None  # the backfill's claim-embed-store loops at once; None: one per CPU core


def run(exchange_id: int, attempt: int = 0) -> str:
    """RQ entry point: chunk one exchange; returns what happened (stored, exists, failed, retrying, missing)."""
    context = current_context()
    config = memory_config(context)
    embedder = ensure_embedder(context)
    with context.sessions.begin() as session:
        exchange = session.get(Exchange, exchange_id)
        if exchange is None:
            logger.info("exchange %s is gone; nothing to chunk", exchange_id)
            return "missing"
        if chunk_exists(session, exchange_id):
            return "exists"
        chat_turn = exchange.embedding_model == vectors.DEFERRED
        if chat_turn:
            # A chat turn stored lean: its lines, and its turn's vector (the re-index's very input), come now.
            vectors.fill_exchange(session, embedder, exchange_id)
            session.refresh(exchange)  # the vector just stored, for the known facts nearest to it
        else:
            if exchange.embedding is None:  # imported, its vectors not backfilled yet: its lines' too, as the backfill
                vectors.fill_exchange(session, embedder, exchange_id)
            reindex_turn(embedder, exchange)
        user_text = exchange.user_text
        owner = exchange.user_id
        # From words (the compact profile) the chunk needs no prompt: the lines of an imported talk, or the person's
        # messages before this one; a model's chunk needs the prompt with the thread and the known facts.
        messages, named, said_before = [], [], []
        if not words_only(context):
            messages = build_messages(context, session, exchange, config)
        elif not (named := named_lines(session, exchange)):
            earlier = _earlier_exchanges(session, exchange, config.chunker.context_exchanges)
            said_before = [row.user_text for row in earlier]
    if chat_turn:  # its lines are in: their words join the index proper before the person's next recall
        vectors.merge_pending_lines(context.engine, owner)
    try:
        chunk, completion = ask_chunk(context, messages, config, user_text, named, said_before)
    except (LLMMalformedOutput, ChunkInvalid) as exc:
        return record_failure(context, exchange_id, "invalid_json", str(exc))
    except LLMError as exc:
        if reschedule(context, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB, exchange_id, attempt,
                      config.chunker.retry_backoff_s, CHUNK_JOB_ID % exchange_id, user_id=owner):
            return "retrying"
        return record_failure(context, exchange_id, "llm_unavailable", str(exc))
    with context.sessions.begin() as session:
        exchange = session.get(Exchange, exchange_id)
        if exchange is None:
            return "missing"
        stored = store_chunk(session, embedder, exchange, chunk, model=completion.model, facts_config=config.facts)
    if stored is None:
        return "exists"
    actions = [result.action for result in stored.facts]
    logger.info("exchange %s chunked: %d facts %s, %d assistant statements not stored as facts", exchange_id,
                len(actions), actions, stored.skipped_assistant_facts, extra={"exchange_id": exchange_id})
    return "stored"


def reindex_turn(embedder: Embedder, exchange: Exchange) -> None:
    """Recall matches whole turns: re-embed the message together with its reply.

    For an exchange stored with the message's own embedding (the digest did so before it stored
    turns lean, migration 0015): the turn's vector finds it better by what was answered too. Same
    input, same vector: safe to repeat.
    """
    if exchange.reply.strip():
        exchange.embedding = embedder.embed(f"{exchange.user_text}\n{exchange.reply}")
        exchange.embedding_model = embedder.model_id


def ask_chunk(context: WorkerContext, messages: list[dict[str, Any]], config: MemoryConfig,
              user_text: str = "", named: list[tuple[str, str]] | None = None,
              said_before: list[str] | None = None) -> tuple[dict[str, Any], Completion]:
    """The validated chunk (one corrective retry on a wrong shape), or the person's own sentences under the
    compact profile (no model call); ``named``: the lines of an imported conversation between named people,
    whose facts are each named for who said them; ``said_before``: the person's earlier messages, newest first."""
    if words_only(context):
        chunk = chunk_from_lines(named) if named else chunk_from_words(user_text, said_before=said_before or ())
        return chunk, Completion("", WORDS_MODEL, 0, 0, 0, 0.0)
    schema = CHUNK_SCHEMA if config.chunker.send_schema else None
    return ask_validated(context.llm, ROLE, messages, schema, validate_chunk)


def named_lines(session: Session, exchange: Exchange) -> list[tuple[str, str]]:
    """The exchange's (speaker, text) lines when a named person speaks in it (an imported conversation between
    people), else [] (a chat turn's lines are "user" and "assistant")."""
    lines = turns.lines_by_exchange(session, exchange.user_id, [exchange.id]).get(exchange.id, [])
    said = [(str(line["speaker"]), str(line["text"])) for line in lines]
    return said if any(speaker not in UNNAMED for speaker, _ in said) else []


def words_only(context: WorkerContext) -> bool:
    """Enrichment without a model call: always under the compact profile (configs/profiles.toml says why)."""
    return llm_profile(context).compact


def build_messages(context: WorkerContext, session: Session, exchange: Exchange,
                   config: MemoryConfig) -> list[dict[str, Any]]:
    """The chunker prompt with world state: time, earlier turns, related facts the person already told us."""
    timezone = user_zone(session, exchange.user_id)
    when = exchange.occurred_at or exchange.created_at or dt.datetime.now(dt.UTC)
    system = context.prompts.render(
        PROMPT, tz=timezone, when=when.isoformat(timespec="minutes"), user_text=exchange.user_text,
        reply=exchange.reply or "(no reply)", earlier=_earlier(session, exchange, config.chunker.context_exchanges),
        known_facts=_known_facts(session, exchange, config.chunker.known_facts, config),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "Write the memory chunk as JSON."}]


def _earlier(session: Session, exchange: Exchange, count: int) -> str:
    rows = _earlier_exchanges(session, exchange, count)
    lines = [f"User: {row.user_text}\nAssistant: {row.reply}" for row in reversed(rows)]
    return "\n".join(lines) or "(nothing earlier)"


def _earlier_exchanges(session: Session, exchange: Exchange, count: int) -> list[Exchange]:
    """The ``count`` exchanges of the thread before this one, newest first."""
    time = func.coalesce(Exchange.occurred_at, Exchange.created_at)
    return list(session.scalars(
        select(Exchange).where(Exchange.thread_id == exchange.thread_id, Exchange.user_id == exchange.user_id,
                               Exchange.id != exchange.id, time <= (exchange.occurred_at or exchange.created_at))
        .order_by(time.desc(), Exchange.id.desc()).limit(count)
    ).all())


def _known_facts(session: Session, exchange: Exchange, count: int, config: MemoryConfig) -> str:
    statement = select(Fact.text).where(Fact.user_id == exchange.user_id, Fact.superseded_at.is_(None))
    if exchange.embedding is not None:
        prepare_vector_search(session, config.recall)
        statement = statement.where(Fact.embedding.is_not(None)).order_by(Fact.embedding.cosine_distance(
            exchange.embedding))
    else:
        statement = statement.order_by(Fact.updated_at.desc())
    facts = session.scalars(statement.limit(count)).all()
    return "\n".join(f"- {text}" for text in facts) or "(nothing yet)"


def record_failure(context: WorkerContext, exchange_id: int, reason: str, detail: str) -> str:
    """Count and log that the exchange stays without enrichment, and mark it done for the episode job."""
    context.metrics.inc(FAILURES_METRIC, {"stage": "chunker", "reason": reason})
    logger.warning("memory chunker: exchange %s stored without enrichment (%s): %s", exchange_id, reason, detail,
                   extra={"exchange_id": exchange_id, "reason": reason})
    with context.sessions.begin() as session:
        exchange = session.get(Exchange, exchange_id)
        if exchange is not None:
            store_failure(session, exchange, f"{reason}: {detail}")
    return "failed"


def reschedule(context: WorkerContext, queue_name: str, func_path: str, key: Any, attempt: int,
               backoff_s: tuple[int, ...], job_prefix: str, *, user_id: str, **kwargs: Any) -> bool:
    """Run ``user_id``'s job again after the attempt's backoff; False when the backoff list is used up."""
    if attempt >= len(backoff_s):
        return False
    delay = dt.timedelta(seconds=backoff_s[attempt])
    rq_queue, job_id = Queue(queue_name, connection=context.redis), RETRY_JOB_ID % (job_prefix, attempt + 1)
    with context.redis.pipeline() as pipe:
        rq_queue.enqueue_in(delay, func_path, args=(key, attempt + 1), kwargs=kwargs, job_id=job_id,
                            meta=owner_meta(user_id), pipeline=pipe, **memory_job_options())
        replace_failed(pipe, rq_queue, [job_id])
        pipe.execute()
    logger.info("%s %s: attempt %d, running again in %s", func_path, key, attempt + 1, delay)
    return True


def ensure_embedder(context: WorkerContext) -> Embedder:
    """The process's embedder; loaded here once if the start-up did not load one for this role."""
    if context.embedder is None:
        from services.embeddings import load_embedder

        context.embedder = load_embedder(context.settings.embedder, graph_dir=context.settings.models_dir)
    return context.embedder


def embed_item(kind: str, item_id: int) -> str:
    """RQ entry point: (re)compute the embedding of a fact or episode edited over REST (the web loads no model)."""
    from services.memory.edits import embed_pending

    context = current_context()
    with context.sessions.begin() as session:
        return embed_pending(session, ensure_embedder(context), kind, item_id)


def fill_vectors() -> str:
    """RQ entry point: the vector backfill (services/memory/vectors.py) for a while, then each person's new
    words (services/memory/vocabulary.py), then a large person's own vector index (services/memory/person_index.py),
    then again while rows, words or indexes wait."""
    context = current_context()
    embedder = ensure_embedder(context)
    # A loop per core: one embeds while another's batch is written (the worker runs at low priority).
    loops = BACKFILL_LOOPS or os.cpu_count() or 1
    started = time.monotonic()
    done = vectors.fill_all(context.sessions, embedder, budget_s=BACKFILL_BUDGET_S, loops=loops)
    words = 0
    with context.sessions() as session:
        left = vectors.pending_count(session)
    expands = memory_config(context).recall.expands  # no vocabulary is needed while the expansion is off
    if not left and expands:  # the exchanges' vectors first: recall needs them more than it needs expansion words
        words = vocabulary.fill_all(context.sessions, embedder,
                                    budget_s=max(1.0, BACKFILL_BUDGET_S - (time.monotonic() - started)))
    with context.sessions() as session:
        words_left = expands and vocabulary.pending(session)
    indexed: list[person_index.Built] = []
    indexes_left = False
    if not left and not words_left:  # a large person's own vector index, once their vectors are all in
        cfg = memory_config(context).recall
        indexed = person_index.build_wanted(context.engine, cfg,
                                            budget_s=max(0.0, BACKFILL_BUDGET_S - (time.monotonic() - started)))
        if indexed:  # the budget ran out with more people waiting: the continuation builds theirs
            with context.sessions() as session:
                indexes_left = bool(person_index.wanted(session, cfg))
    if left or words_left or indexes_left:
        job = get_current_job()
        vectors.enqueue_backfill(context.redis, continuing=job.id if job is not None else None)
    logger.info("vector backfill: %d exchanges embedded, %d waiting; %d words added; %d own indexes built", done,
                left, words, len(indexed), extra={"embedded": done, "words": words, "indexes": len(indexed)})
    built = f"; {len(indexed)} own indexes built" if indexed else ""
    return f"embedded {done}, {left} waiting; {words} words added{built}"
