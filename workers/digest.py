"""The digest job (prompt-queue): one chat message, from understanding to stored reply.

Read ``digest()`` top to bottom: it is DESIGN.md §3 as a sequence of named steps.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any

import redis
from rq import Retry
from sqlalchemy import Select, bindparam, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from services.act.critic import pending_confirmation
from services.db import Exchange, RoutingDecision, insert
from services.errors import Superseded
from services.llm.completion import Completion
from services.llm.health import record_outcome
from services.llm.priority import ChatPriority
from services.logs import request_context
from services.memory.vectors import DEFERRED
from services.queues import (
    CHUNK_JOB_ID,
    CHUNKER_JOB,
    MEMORY_CHUNKER_QUEUE,
    ChatRequest,
    attempt_fence,
    enqueue,
    load_request,
    memory_job_options,
    owner_meta,
    queue,
    queue_attempt_count,
)
from services.streams import request_channel
from services.threads import ThreadState, read_snapshot
from services.topics import ABSORB, absorb_params
from workers.context import WorkerContext
from workers.generation import Reply, acts, generate
from workers.ordering import process_in_order
from workers.process import current_context
from workers.request_failure import fail_request, on_failure  # noqa: F401  (on_failure: jobs queued before it moved)
from workers.turn import Turn
from workers.understanding import Understanding, understand

logger = logging.getLogger(__name__)
EXCHANGES, DECISIONS = Exchange.__table__, RoutingDecision.__table__


def run(request_id: str) -> str:
    """RQ entry point: process this request (and any earlier one of its thread) in order."""
    context = current_context()
    with request_context(request_id):
        request = load_request(context.redis, request_id)
        if request is None:
            logger.warning("request %s expired before it was processed", request_id)
            return "expired"
        wait_s = max(30.0, context.settings.job_timeout_s - 60.0)
        return process_in_order(context.redis, context.events, request, lambda r: digest(context, r), wait_s=wait_s)


def digest(context: WorkerContext, request: ChatRequest) -> None:
    """DESIGN.md §3, steps 1–7."""
    with request_context(request.request_id):
        turn = Turn(request=request, channel=request_channel(request.request_id))
        attempt, snapshot = open_turn(context, turn)
        # A later run of this request (its job handed to another worker while this one still lived)
        # fences this one off: its next event is refused and it stops, so one run speaks.
        turn.fence = attempt_fence(request.request_id, attempt)
        try:
            _digest_attempt(context, turn, attempt, snapshot)
        except Superseded:
            logger.warning("attempt %d of request %s was taken over by a later run; stopping", attempt,
                           request.request_id)
        finally:
            if turn.in_flight:  # the turn ended early or failed: finish did not clear the mark
                ChatPriority(context.redis).clear(request.request_id)


def open_turn(context: WorkerContext, turn: Turn) -> tuple[int, tuple[ThreadState, list[dict[str, Any]]]]:
    """One round trip: count this run's attempt, mark the turn in flight (background LLM work waits while it
    thinks and writes: services/llm/priority.py) and read the thread's state and working memory."""
    request = turn.request
    opening = context.redis.pipeline()
    queue_attempt_count(opening, request.request_id, context.settings.events_ttl_s)
    ChatPriority(context.redis).mark(opening, request.request_id)
    context.threads.queue_snapshot(opening, request.thread_id)
    attempt, _, _, raw_state, memory = opening.execute()
    turn.in_flight = True
    return int(attempt), read_snapshot(request.thread_id, raw_state, memory)


def _digest_attempt(context: WorkerContext, turn: Turn, attempt: int,
                    snapshot: tuple[ThreadState, list[dict[str, Any]]]) -> None:
    request = turn.request
    # Every run counts itself before it can store, so only a later attempt can find a stored row.
    if attempt > 1 and _republish_if_stored(context, turn):
        return
    if _give_up_if_looping(context, turn, attempt):
        return
    # Counters and histograms are written in one round trip when the turn is over, not on its path.
    with context.metrics.deferred():
        started = time.monotonic()
        understanding = understand(context, request, snapshot)  # steps 1–4: topic, thread, session, route
        turn.mark("understanding_s", time.monotonic() - started)
        turn.publish(context, "status", {"stage": "thinking", "topic": understanding.topic,
                                         "mode": understanding.mode})
        if acts(context, turn, understanding):
            # One transaction: whatever ACT skills write, the exchange and its routing decision.
            with context.sessions.begin() as session:
                reply = generate(context, turn, understanding, session)  # step 5
                exchange_id = store(session, turn, understanding, reply)  # step 6
        else:
            reply = generate(context, turn, understanding, None)  # step 5
            exchange_id = store_alone(context, turn, understanding, reply)  # step 6
        if exchange_id is None:  # an earlier run of this request stored its reply first: deliver that one
            _republish_if_stored(context, turn)
            return
        finish(context, turn, understanding, reply, exchange_id, stored_now=True)  # step 7, then memory, enrichment


def store_alone(context: WorkerContext, turn: Turn, understanding: Understanding, reply: Reply) -> int | None:
    """``store`` as a statement of its own (autocommit, durable as ever): it is atomic by itself, so a turn
    that writes nothing else spares the BEGIN and COMMIT round trips between its last delta and ``message``."""
    with context.engine.connect() as connection:
        return store(connection.execution_options(isolation_level="AUTOCOMMIT"), turn, understanding, reply)


def store(session: Session | Connection, turn: Turn, understanding: Understanding, reply: Reply) -> int | None:
    """Exchange and routing decision in the caller's transaction; None if another run of it stored it first.

    One Core statement (the decision is inserted in a CTE from the exchange's new id): one round
    trip and no ORM bookkeeping on every chat turn; the statement is built once per process.
    """
    request = turn.request
    completion: Completion = reply.completion
    exchange = {
        "request_id": request.request_id,
        "user_id": request.user_id,
        "thread_id": request.thread_id,
        "source": request.source,
        "user_text": user_text(request, reply),
        "reply": reply.text,
        "mode": understanding.mode,
        "topic": understanding.topic,
        "confidence": understanding.confidence,
        "tool_trail": reply.tool_trail,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "total_tokens": completion.total_tokens,
        "timings": {**turn.timings, "received_at": request.received_at,
                    **({"fallback_reason": completion.error} if reply.fallback and completion.error else {})},
        "fallback": reply.fallback,
        "session_id": understanding.session_id,
        # Lean: no lines (the trigger skips the row) and no vector on the reply's path; the chunker job
        # queued after the reply derives both (services/memory/vectors.py, migration 0015).
        "embedding_model": DEFERRED,
    }
    decision = understanding.decision_row(request)
    statement = _store_statement(tuple(exchange), tuple(decision))
    params = {**{f"x_{name}": value for name, value in exchange.items()},
              **{f"d_{name}": value for name, value in decision.items()}}
    exchange_id = session.scalar(statement, params)
    return None if exchange_id is None else int(exchange_id)  # None: stored by another run (its decision too)


@functools.cache
def _store_statement(exchange_columns: tuple[str, ...], decision_columns: tuple[str, ...]) -> Select[Any]:
    """INSERT the exchange … RETURNING its id in a CTE and the decision from that id; parameters ``x_*`` and
    ``d_*``. The matched topic's centroid moves after the reply (``move_topic``)."""
    stored = (
        insert(EXCHANGES)
        .values({name: bindparam(f"x_{name}", type_=EXCHANGES.c[name].type) for name in exchange_columns})
        .on_conflict_do_nothing(index_elements=["request_id"])
        .returning(EXCHANGES.c.id)
        .cte("stored")
    )
    audit = (
        insert(DECISIONS)
        .from_select(["exchange_id", *decision_columns],
                     select(stored.c.id, *(bindparam(f"d_{name}", type_=DECISIONS.c[name].type)
                                           for name in decision_columns)))
        .on_conflict_do_nothing(index_elements=["request_id"])
        .cte("audit")
    )
    return select(stored.c.id).add_cte(audit)


def move_topic(context: WorkerContext, understanding: Understanding) -> None:
    """The matched topic's centroid absorbs this turn's message: after the reply is out, once, by the run that
    stored the exchange (a run that finds it stored does not move it again).

    Not in the store statement: the centroid's new row version takes a new entry in the topics' HNSW index,
    the costliest part of that statement once the exchange is stored lean (bench/pipeline.py, hot4). It still
    happens before the job ends, so the thread's next message (which waits for this job) is classified
    against the moved centroid. A crash between the store and this statement leaves the centroid where it
    was: derived state, one message's nudge lost.
    """
    if understanding.topic_update is None:
        return
    with context.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").execute(
            ABSORB, absorb_params(understanding.topic_update))


def user_text(request: ChatRequest, reply: Reply) -> str:
    """The person's words of this turn: the message plus any message steered into its ACT loop."""
    steered = [step["text"] for step in reply.tool_trail if step.get("type") == "steering" and step.get("text")]
    return "\n".join([request.text, *steered])


def remember(context: WorkerContext, turn: Turn, understanding: Understanding, reply: Reply, exchange_id: int,
             pipeline: redis.client.Pipeline) -> None:
    """Update the Redis thread (working memory, last mode, topic) after the durable store (on ``pipeline``)."""
    request = turn.request
    entry = {
        "request_id": request.request_id,
        "exchange_id": exchange_id,
        "user": user_text(request, reply),
        "reply": reply.text,
        "mode": understanding.mode,
        "topic": understanding.topic,
        "at": request.received_at,
        **({"note": reply.note} if reply.note else {}),
    }
    known = (understanding.thread, understanding.working_memory) if understanding.thread is not None else None
    # A stored turn (Understanding.from_stored) knows no thread and leaves the topic as it is.
    topic = (understanding.topic, understanding.topic_confidence) if understanding.thread is not None else None
    context.threads.record_exchange(request.thread_id, request.user_id, entry, known=known, topic=topic,
                                    pipeline=pipeline)


def enqueue_enrichment(context: WorkerContext, exchange_id: int, user_id: str,
                       pipeline: redis.client.Pipeline | None = None) -> None:
    """Memory enrichment happens off the hot path: one chunker job per exchange, owned by its user.

    With ``pipeline`` (a MULTI the caller executes) the job is enqueued in it without first looking
    for one already queued: only for an exchange this very run inserted, which no job can name yet.
    """
    options = {"job_id": CHUNK_JOB_ID % exchange_id, "retry": Retry(max=2, interval=[5, 30]),
               "meta": owner_meta(user_id), **memory_job_options()}
    if pipeline is None:
        enqueue(context.redis, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB, exchange_id, **options)
        return
    queue(MEMORY_CHUNKER_QUEUE, context.redis).enqueue(CHUNKER_JOB, exchange_id, pipeline=pipeline, **options)


def finish(context: WorkerContext, turn: Turn, understanding: Understanding, reply: Reply, exchange_id: int,
           already_sent: frozenset[str] = frozenset(), *, stored_now: bool = False) -> None:
    """Publish ``message`` and ``done`` (unless ``already_sent``), update working memory, queue enrichment,
    record the output for late readers. ``stored_now``: this run inserted the exchange (a fresh id)."""
    request = turn.request
    response_time_s = round(time.time() - request.received_at, 3)
    message = {
        "text": reply.text,
        "mode": understanding.mode,
        "topic": understanding.topic,
        "confidence": round(understanding.confidence, 4),
        "exchange_id": exchange_id,
        "metrics": {
            "tokens_total": reply.completion.total_tokens,
            "tools": reply.tool_counts(),
            "response_time_s": response_time_s,
        },
        "recalled": understanding.recalled,
    }
    if reply.fallback:
        # A client can show this turn as a failure, not as an answer (the text is only an apology).
        message.update(fallback=True, reason=reply.completion.error or "the LLM did not answer")
    confirm = pending_confirmation(reply.tool_trail)  # the action the reply asks to confirm (the page: yes/no)
    if confirm is not None:
        message["confirm"] = confirm
    events: list[tuple[str, dict[str, Any]]] = []
    if "message" not in already_sent:
        if reply.unsent:  # the reply's last streamed text, held back to travel with the message
            events.append(("delta", {"text": reply.unsent}))
        events.append(("message", message))
    if "done" not in already_sent:
        events.append(("done", {"duration_ms": int(response_time_s * 1000)}))
    if events:
        turn.publish_all(context, events)  # one round trip
    if stored_now:
        move_topic(context, understanding)
    # After the reply is out (off its latency): enrichment, working memory and the output that marks
    # the request finished, in one transaction. A crash before it makes the retry deliver the stored
    # row again and redo them (all idempotent; the retry looks for a queued chunker job first). The
    # thread lease is still held, so the thread's next message sees this one in working memory.
    if not stored_now:
        enqueue_enrichment(context, exchange_id, request.user_id)
    after = context.redis.pipeline()
    after.multi()  # explicit, as RQ expects of a pipeline it is handed
    if stored_now:
        enqueue_enrichment(context, exchange_id, request.user_id, pipeline=after)
    remember(context, turn, understanding, reply, exchange_id, pipeline=after)
    context.events.set_output(request.request_id, {"status": "ok", **message}, pipeline=after)
    if reply.fallback or reply.completion.total_tokens:  # turns without an LLM call say nothing about it
        record_outcome(context.redis, not reply.fallback, reply.completion.error, pipeline=after)
    if turn.in_flight:
        ChatPriority(context.redis).clear(request.request_id, pipeline=after)
    after.execute()
    turn.in_flight = False
    context.metrics.inc("engram_mode_total", {"mode": understanding.mode})
    context.metrics.observe("engram_reply_seconds", time.monotonic() - turn.started)
    if reply.fallback:
        context.metrics.inc("engram_llm_fallbacks_total")
    # The topic label is made of the message's words, so it stays out of the INFO line.
    logger.info(
        "reply stored as exchange %s (%s)",
        exchange_id,
        understanding.mode,
        extra={"exchange_id": exchange_id, "mode": understanding.mode, "response_time_s": response_time_s},
    )


def _republish_if_stored(context: WorkerContext, turn: Turn) -> bool:
    """A job that crashed after storing: don't store twice, just deliver what is stored."""
    with context.sessions() as session:
        row = session.scalars(select(Exchange).where(Exchange.request_id == turn.request.request_id)).first()
    if row is None:
        return False
    # A crash between the stream's last events must not repeat the reply on the client's stream.
    sent = frozenset(context.events.logged_kinds(turn.channel) & {"message", "done"})
    logger.info("exchange %s already stored; delivering what the stream lacks (sent: %s)", row.id,
                ", ".join(sorted(sent)) or "nothing")
    finish(context, turn, Understanding.from_stored(row), Reply.from_stored(row), row.id, already_sent=sent)
    return True


def _give_up_if_looping(context: WorkerContext, turn: Turn, attempt: int) -> bool:
    """Give up a message that keeps crashing its worker (``attempt`` counts its runs) rather than loop on it."""
    if attempt > 1:
        # Deltas of the failed attempt were already sent; the client starts the reply over.
        turn.publish(context, "status", {"stage": "retrying", "attempt": attempt})
    if attempt <= context.settings.job_retries + 1:
        return False
    logger.error("request %s failed %d times; giving up", turn.request.request_id, attempt - 1)
    fail_request(context.redis, turn.request.request_id)
    return True
