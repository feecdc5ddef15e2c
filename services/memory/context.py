"""Context assembly: what the assistant remembers that bears on a message, as text for a mode prompt.

The person's autobiography first (written by the periodic service), then relevant facts (plus the
few most salient ones, whatever the message), episodes, the recalled turns (each with its date and
speaker, most relevant first), and the drift thoughts lately pushed to the person, within a token
budget. Nothing relevant → "".
Working memory (the thread's recent turns) is rendered by the caller as history; pass its
exchange ids as ``exclude_exchange_ids`` so nothing is shown twice.

With ``beside``, the personal read (narrative, profile facts, shared thoughts: it does not depend on
the message) runs on a connection of its own while recall runs, instead of after it, when the pool has
one to spare (``sidearms``): the digest's wait for it overlaps recall's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Row
from sqlalchemy import text as sql_text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from services.embeddings import Embedder
from services.memory import sidearms
from services.memory.config import MemoryConfig
from services.memory.recall import RecallHit, recall

TURN_CHARS = 240


@dataclass
class AssembledContext:
    text: str
    hits: list[RecallHit] = field(default_factory=list)
    confidence: float = 0.0  # best relevance among what was included, 0–1 (the router's memory_confidence)
    receipts: list[dict[str, Any]] = field(default_factory=list)  # what went into ``text``, for the person


def assemble_context(session: Session, embedder: Embedder | None, user_id: str, query_text: str, *,
                     query_embedding: np.ndarray | None = None, budget_tokens: int | None = None,
                     exclude_exchange_ids: Iterable[int] = (), config: MemoryConfig | None = None,
                     now: dt.datetime | None = None) -> str:
    """The "What you remember" text for the mode prompts; "" when nothing relevant is remembered."""
    return assemble(session, embedder, user_id, query_text, query_embedding=query_embedding,
                    budget_tokens=budget_tokens, exclude_exchange_ids=exclude_exchange_ids, config=config,
                    now=now).text


def assemble(session: Session, embedder: Embedder | None, user_id: str, query_text: str, *,
             query_embedding: np.ndarray | None = None, budget_tokens: int | None = None,
             exclude_exchange_ids: Iterable[int] = (), config: MemoryConfig | None = None,
             now: dt.datetime | None = None, beside: bool = False) -> AssembledContext:
    """Like ``assemble_context``, also returning the hits used and a confidence for the router.

    ``beside``: run the personal read on its own pooled connection during recall (see the module doc).
    """
    cfg = config or MemoryConfig()
    ctx = cfg.context
    k = ctx.max_facts + ctx.max_episodes + ctx.max_exchanges
    early = _read_personal_aside(session, user_id, cfg, now) if beside else None
    hits = recall(session, embedder, user_id, query_text, k=k, query_embedding=query_embedding, config=cfg,
                  now=now, exclude_exchange_ids=exclude_exchange_ids)
    relevant = [hit for hit in hits if hit.signals.get("relevance", 0.0) >= ctx.min_relevance]
    facts = [hit for hit in relevant if hit.kind == "fact"][: ctx.max_facts]
    shown = {hit.id for hit in facts}
    rows = early.result() if early is not None else _personal_rows(session, user_id, len(shown), cfg, now)
    personal = _personal(rows, shown, cfg)
    profile = personal.profile
    episodes = [hit for hit in relevant if hit.kind == "episode"][: ctx.max_episodes]
    exchanges = [hit for hit in relevant if hit.kind == "exchange"][: ctx.max_exchanges]
    budget = Budget(int((budget_tokens or ctx.budget_tokens) * ctx.chars_per_token))
    sections = [
        _narrative(personal.narrative, cfg, budget),
        _section("Facts the person told you:", [_fact_line(hit.text, hit.at) for hit in facts]
                 + [_fact_line(fact.text, fact.at) for fact in profile], budget),
        _section("Earlier conversations:", [_episode_line(hit) for hit in episodes], budget),
        _section("Things said before:", [_exchange_block(hit) for hit in exchanges], budget),
        _thoughts(personal.thoughts, budget),
    ]
    text = "\n\n".join(section for section in sections if section)
    used = facts + episodes + exchanges
    confidence = max((hit.signals.get("relevance", 0.0) for hit in used), default=0.0)
    return AssembledContext(text=text, hits=used, confidence=round(confidence, 4) if text else 0.0,
                            receipts=receipts(text, facts, profile, episodes, exchanges))


def receipts(text: str, facts: list[RecallHit], profile: list[Remembered], episodes: list[RecallHit],
             exchanges: list[RecallHit]) -> list[dict[str, Any]]:
    """One small record per remembered item whose line made it into ``text`` (the budget may drop some)."""
    kept: list[dict[str, Any]] = []
    for hit in facts:
        if _fact_line(hit.text, hit.at) in text:
            kept.append(_receipt("fact", hit.id, hit.text, hit.signals.get("relevance")))
    for fact in profile:
        if _fact_line(fact.text, fact.at) in text:
            kept.append(_receipt("fact", fact.id, fact.text, None))
    for hit in episodes:
        if _episode_line(hit) in text:
            kept.append(_receipt("episode", hit.id, hit.text, hit.signals.get("relevance")))
    for hit in exchanges:
        if _exchange_block(hit) in text:
            receipt = _receipt("exchange", hit.id, hit.meta.get("user_text") or hit.text, hit.signals.get("relevance"))
            receipt["thread_id"] = hit.meta.get("thread_id")
            kept.append(receipt)
    return kept


def _receipt(kind: str, item_id: int, text: str, relevance: float | None) -> dict[str, Any]:
    return {"kind": kind, "id": int(item_id), "text": _short(text, 160),
            "relevance": round(float(relevance), 4) if relevance is not None else None}


class Budget:
    """Characters left for the block."""

    def __init__(self, chars: int) -> None:
        self.left = chars

    def take(self, line: str) -> bool:
        if len(line) + 1 > self.left:
            return False
        self.left -= len(line) + 1
        return True


def _section(title: str, lines: list[str], budget: Budget) -> str:
    if not lines or not budget.take(title):
        return ""
    kept = [line for line in lines if budget.take(line)]
    return "\n".join([title, *kept]) if kept else ""


@dataclass(frozen=True)
class Remembered:
    """A profile fact or a shared thought as the context shows it."""

    id: int
    text: str
    at: dt.datetime | None


@dataclass
class Personal:
    """What context assembly shows of the person whatever the message: the narrative, the most salient
    facts, the thoughts lately shared with them."""

    narrative: str | None = None
    profile: list[Remembered] = field(default_factory=list)
    thoughts: list[Remembered] = field(default_factory=list)


def _read_personal_aside(session: Session, user_id: str, cfg: MemoryConfig,
                         now: dt.datetime | None) -> Future[Sequence[Row[Any]]] | None:
    """The personal read started beside the turn with a connection of its own (autocommit: it reads committed
    rows, as the turn's transaction would, and needs no BEGIN or ROLLBACK); None without a spare connection."""
    engine = sidearms.side_engine(session, own_only=False)
    if engine is None:
        return None
    spare = cfg.context.max_facts  # recall's facts are not known yet: read enough to drop any it shows

    def read() -> Sequence[Row[Any]]:
        with engine.connect() as connection:
            return _personal_rows(connection.execution_options(isolation_level="AUTOCOMMIT"), user_id, spare, cfg,
                                  now)

    return sidearms.side_pool().submit(read)


def _personal_rows(session: Session | Connection, user_id: str, spare: int, cfg: MemoryConfig,
                   now: dt.datetime | None) -> Sequence[Row[Any]]:
    """The narrative, the profile facts (``spare`` more than shown, for those recall shows already) and the
    shared thoughts, in one statement.

    Three reads on every chat turn were three round trips through the ORM; as one fixed statement
    (``PERSONAL``) they are one round trip, plain rows and no statement to build per turn.
    """
    ctx = cfg.context
    since = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=ctx.shared_thoughts_days)
    return session.execute(PERSONAL, {
        "user": user_id, "stories": 1 if ctx.narrative_chars >= 1 else 0,
        "facts": ctx.profile_facts + spare if ctx.profile_facts >= 1 else 0,
        "min_salience": ctx.profile_min_salience, "thoughts": max(0, ctx.shared_thoughts), "since": since,
    }).all()


def _personal(rows: Sequence[Row[Any]], shown: set[int], cfg: MemoryConfig) -> Personal:
    """The personal rows as the context shows them: profile facts besides the ``shown`` ones."""
    ctx = cfg.context
    personal = Personal()
    for kind, item_id, text, at, _rank in sorted(rows, key=lambda row: row[4]):
        if kind == "narrative":
            personal.narrative = text
        elif kind == "fact" and item_id not in shown:
            personal.profile.append(Remembered(int(item_id), text, at))
        elif kind == "thought":
            personal.thoughts.append(Remembered(int(item_id), text, at))
    personal.profile = personal.profile[: max(0, ctx.profile_facts)]
    return personal


# Each part keeps its own order and limit (a limit of 0 turns a part off); ``rank`` orders the rows within a kind.
PERSONAL = sql_text("""
(SELECT 'narrative' AS kind, id, narrative AS text, created_at AS at, 1::bigint AS rank FROM autobiographies
 WHERE user_id = :user ORDER BY created_at DESC, id DESC LIMIT :stories)
UNION ALL
(SELECT 'fact', id, text, updated_at,
        row_number() OVER (ORDER BY salience DESC, confidence DESC, updated_at DESC) FROM facts
 WHERE user_id = :user AND superseded_at IS NULL AND salience >= :min_salience
 ORDER BY salience DESC, confidence DESC, updated_at DESC LIMIT :facts)
UNION ALL
(SELECT 'thought', id, text, created_at, row_number() OVER (ORDER BY created_at DESC) FROM drift_gists
 WHERE user_id = :user AND pushed_event_id IS NOT NULL AND created_at >= :since
 ORDER BY created_at DESC LIMIT :thoughts)
""")


def _narrative(narrative: str | None, cfg: MemoryConfig, budget: Budget) -> str:
    """The person's story as you last wrote it (autobiography service), shortened to its share."""
    if narrative is None or not narrative.strip():
        return ""
    return _section("Who the person is (your own running summary):",
                    [_short(narrative, cfg.context.narrative_chars)], budget)


def _thoughts(thoughts: list[Remembered], budget: Budget) -> str:
    """Thoughts pushed to the person lately: they may be answering one."""
    lines = [f"- {_day(gist.at)}: {_short(gist.text)}" for gist in thoughts]
    return _section("Thoughts you shared with them between conversations:", lines, budget)


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value else "date unknown"


def _short(text: str, limit: int = TURN_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _fact_line(text: str, at: dt.datetime | None) -> str:
    return f"- {_short(text)} (as of {_day(at)})"


def _episode_line(hit: RecallHit) -> str:
    meta = hit.meta
    parts = [f"- {_day(hit.at)}: {_short(hit.text)}"]
    if meta.get("outcome"):
        parts.append(f"Outcome: {_short(meta['outcome'], 160)}.")
    if meta.get("open_loops"):
        parts.append("Still open: " + _short("; ".join(meta["open_loops"]), 160) + ".")
    return " ".join(parts)


def _turn(at: dt.datetime | None, user_text: str, reply: str) -> str:
    said = f"User: {_short(user_text)}" if user_text.strip() else ""
    answered = f"You: {_short(reply)}" if reply.strip() else ""
    return f"- [{_day(at)}] " + " / ".join(part for part in (said, answered) if part)


def _line(line: dict) -> str:
    """One recalled turn with its date and who said it (the person is "User", the assistant "You")."""
    speaker = {"user": "User", "assistant": "You"}.get(line["speaker"], line["speaker"])
    return f"- [{_day(line.get('at'))}] {speaker}: {_short(line['text'])}"


def _exchange_block(hit: RecallHit) -> str:
    """The recalled turns in time order (the answering turn with the one it replies to)."""
    if hit.lines:
        return "\n".join(_line(line) for line in hit.lines)
    turns = [(0, hit.at, hit.meta.get("user_text", hit.text), hit.meta.get("reply", ""))]
    turns += [(n.get("side", 0), n.get("at"), n.get("user_text", n["text"]), n.get("reply", ""))
              for n in hit.neighbours]
    turns.sort(key=lambda item: item[0])
    return "\n".join(_turn(at, user_text or "", reply or "") for _, at, user_text, reply in turns)
