"""Export everything a user has as a versioned JSON bundle, and import such a bundle back.

The bundle holds exchanges, conversation sessions, memory chunks, facts (with their supersede history) and
episodes, and what the person keeps besides memory: lists, reminders and scheduled prompts, goals
(``services/act/portability.py``), and the assistant's drift thoughts and autobiographies about the
person (``services/cognition/portability.py``). Embeddings are left out: they belong to a model, and
import recomputes them. Exchanges are keyed by their external id (or ``exchange:<request_id>``),
facts by theirs (or a hash of text and creation time); importing the same bundle twice stores
nothing twice.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from services.act import portability
from services.cognition import portability as reflections
from services.db import ConversationSession, Exchange, insert
from services.embeddings import Embedder
from services.jobs import enqueue_jobs
from services.memory.episodes import episode_embedding_text
from services.memory.facts import fact_key
from services.memory.importer import (
    ImportReport,
    LineRecord,
    Record,
    digest,
    session_id_for,
    store_records,
)
from services.memory.models import Episode, ExchangeLine, Fact, MemoryChunk, from_iso, iso
from services.queues import CHUNK_JOB_ID, CHUNKER_JOB, MEMORY_CHUNKER_QUEUE
from services.storable import unstorable_reason

FORMAT = "engram-memory-bundle"
VERSION = 1
# Keys each item of a section must have (import reads them directly); a missing section is empty.
REQUIRED = {
    "exchanges": ("key",),
    "chunks": ("exchange_key", "status", "chunk"),
    "facts": ("key", "text", "confidence", "salience"),
    "episodes": ("session_id",),
    **portability.SECTIONS,
    **reflections.SECTIONS,
}
TIME_KEYS = ("occurred_at", "created_at", "updated_at", "superseded_at", "started_at", "ended_at",
             *portability.TIME_KEYS, *reflections.TIME_KEYS)


class BundleInvalid(ValueError):
    """The bundle's version or shape is not one this Engram can import."""


def exchange_key(exchange: Exchange) -> str:
    return exchange.external_id or f"exchange:{exchange.request_id}"


def fact_key_of(fact: Fact) -> str:
    return fact.external_id or "fact:" + digest(fact.text, iso(fact.created_at) or "", size=32)


def export_bundle(session: Session, user_id: str) -> dict[str, Any]:
    """Everything stored for ``user_id`` (and nothing of anyone else), as one JSON-ready dict."""
    time = func.coalesce(Exchange.occurred_at, Exchange.created_at)
    exchanges = session.scalars(select(Exchange).where(Exchange.user_id == user_id).order_by(time, Exchange.id)).all()
    keys = {e.id: exchange_key(e) for e in exchanges}
    lines: dict[int, list[ExchangeLine]] = {}
    for line in session.scalars(select(ExchangeLine).where(ExchangeLine.user_id == user_id)
                                .order_by(ExchangeLine.exchange_id, ExchangeLine.position)):
        lines.setdefault(line.exchange_id, []).append(line)
    facts = session.scalars(select(Fact).where(Fact.user_id == user_id).order_by(Fact.id)).all()
    fact_keys = {f.id: fact_key_of(f) for f in facts}
    return {
        "format": FORMAT, "version": VERSION, "user_id": user_id,
        "exported_at": dt.datetime.now(dt.UTC).isoformat(),
        "sessions": [_session_dict(s) for s in session.scalars(
            select(ConversationSession).where(ConversationSession.user_id == user_id)
            .order_by(ConversationSession.started_at))],
        "exchanges": [_exchange_dict(e, keys[e.id], lines.get(e.id, [])) for e in exchanges],
        "chunks": [{"exchange_key": keys.get(c.exchange_id), "status": c.status, "chunk": c.chunk,
                    "salience": c.salience, "model": c.model, "error": c.error, "created_at": iso(c.created_at)}
                   for c in session.scalars(select(MemoryChunk).where(MemoryChunk.user_id == user_id))],
        "facts": [_fact_dict(f, fact_keys, keys) for f in facts],
        "episodes": [_episode_dict(e, keys) for e in session.scalars(
            select(Episode).where(Episode.user_id == user_id).order_by(Episode.id))],
        **portability.export_owned(session, user_id),
        **reflections.export_reflections(session, user_id),
    }


def _session_dict(s: ConversationSession) -> dict[str, Any]:
    return {"id": s.id, "thread_id": s.thread_id, "topic": s.topic, "started_at": iso(s.started_at),
            "ended_at": iso(s.ended_at), "close_reason": s.close_reason}


def _exchange_dict(e: Exchange, key: str, lines: list[ExchangeLine]) -> dict[str, Any]:
    return {"key": key, "request_id": e.request_id, "thread_id": e.thread_id, "session_id": e.session_id,
            "source": e.source, "user_text": e.user_text, "reply": e.reply, "mode": e.mode, "topic": e.topic,
            "occurred_at": iso(e.occurred_at or e.created_at), "external_id": e.external_id,
            "lines": [{"key": line.external_id, "speaker": line.speaker, "text": line.text,
                       "at": iso(line.occurred_at)} for line in lines]}


def _fact_dict(f: Fact, fact_keys: dict[int, str], keys: dict[int, str]) -> dict[str, Any]:
    return {"key": fact_keys[f.id], "text": f.text, "subject": f.subject, "predicate": f.predicate,
            "object": f.object, "speaker": f.speaker, "confidence": f.confidence, "salience": f.salience,
            "mentions": f.mentions, "source_exchange_keys": [keys[i] for i in f.source_exchange_ids or [] if i in keys],
            "superseded_by_key": fact_keys.get(f.superseded_by) if f.superseded_by else None,
            "superseded_at": iso(f.superseded_at), "access_count": f.access_count,
            "created_at": iso(f.created_at), "updated_at": iso(f.updated_at)}


def _episode_dict(e: Episode, keys: dict[int, str]) -> dict[str, Any]:
    return {"session_id": e.session_id, "title": e.title, "gist": e.gist, "summary": e.summary, "intent": e.intent,
            "emotion": e.emotion, "outcome": e.outcome, "salience": e.salience, "open_loops": e.open_loops,
            "started_at": iso(e.started_at), "ended_at": iso(e.ended_at), "model": e.model,
            "exchange_keys": [keys[i] for i in e.exchange_ids or [] if i in keys], "created_at": iso(e.created_at)}


def is_bundle(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


def validate_bundle(bundle: Any) -> None:
    """Refuse, with ``BundleInvalid`` naming the first problem, a bundle that import would fail on halfway."""
    if not is_bundle(bundle):
        raise BundleInvalid(f"not an Engram memory bundle (expected \"format\": \"{FORMAT}\")")
    if bundle.get("version") != VERSION:
        raise BundleInvalid(f"unsupported bundle version {bundle.get('version')!r} (this Engram reads {VERSION})")
    reason = unstorable_reason(bundle, "the bundle")
    if reason:
        raise BundleInvalid(reason)
    for section, keys in REQUIRED.items():
        items = bundle.get(section, [])
        if not isinstance(items, list):
            raise BundleInvalid(f"'{section}' must be a list")
        for index, item in enumerate(items):
            _check_item(section, index, item, keys)


def _check_item(section: str, index: int, item: Any, keys: tuple[str, ...]) -> None:
    if not isinstance(item, dict):
        raise BundleInvalid(f"{section}[{index}] must be an object")
    missing = [key for key in keys if key not in item]
    if missing:
        raise BundleInvalid(f"{section}[{index}] lacks {', '.join(repr(key) for key in missing)}")
    for key in TIME_KEYS:
        try:
            from_iso(item.get(key))
        except (TypeError, ValueError):
            raise BundleInvalid(f"{section}[{index}].{key} is not an ISO 8601 time: {item.get(key)!r}") from None
    if section in portability.SECTIONS and (problem := portability.check_owned(section, index, item)):
        raise BundleInvalid(problem)
    if section in reflections.SECTIONS and (problem := reflections.check_reflection(section, index, item)):
        raise BundleInvalid(problem)
    if section == "exchanges":
        _check_lines(f"{section}[{index}]", item.get("lines"))


def _check_lines(where: str, lines: Any) -> None:
    if lines is None:
        return
    if not isinstance(lines, list):
        raise BundleInvalid(f"{where}.lines must be a list")
    for n, line in enumerate(lines):
        if not isinstance(line, dict) or not all(isinstance(line.get(k), str) and line[k] for k in ("speaker", "text")):
            raise BundleInvalid(f"{where}.lines[{n}] needs a non-empty 'speaker' and 'text'")
        try:
            from_iso(line.get("at"))
        except (TypeError, ValueError):
            raise BundleInvalid(f"{where}.lines[{n}].at is not an ISO 8601 time: {line.get('at')!r}") from None


def import_bundle(sessions: sessionmaker[Session], embedder: Embedder, user_id: str, bundle: dict[str, Any], *,
                  progress: Callable[[int], None] | None = None, connection: redis.Redis | None = None,
                  batch_size: int = 256, embed: bool = True) -> ImportReport:
    """Load a bundle for ``user_id`` (any user's bundle: ids are remapped); idempotent."""
    validate_bundle(bundle)
    records = [_record(item) for item in bundle.get("exchanges", [])]
    # Chunks come with the bundle, so only exchanges without one would need the chunker.
    report = store_records(sessions, embedder, user_id, records, batch_size=batch_size, progress=progress,
                           connection=None, embed=embed)
    ids = report.ids_by_key
    with sessions.begin() as session:
        _import_chunks(session, user_id, bundle.get("chunks", []), ids)
        _import_facts(session, embedder, user_id, bundle.get("facts", []), ids)
        _import_episodes(session, embedder, user_id, bundle.get("episodes", []), ids)
        report.owned = {**portability.import_owned(session, user_id, bundle),
                        **reflections.import_reflections(session, user_id, bundle)}
    if connection is not None:
        with sessions() as session:
            done = set(session.scalars(select(MemoryChunk.exchange_id).where(MemoryChunk.user_id == user_id)))
        missing = [(i, CHUNK_JOB_ID % i) for i in ids.values() if i not in done]
        report.chunk_jobs += enqueue_jobs(connection, MEMORY_CHUNKER_QUEUE, CHUNKER_JOB, missing, user_id)
    return report


def _record(item: dict[str, Any]) -> Record:
    at = from_iso(item.get("occurred_at")) or dt.datetime.now(dt.UTC)
    record = Record(key=item["key"], thread_key=f"bundle-thread:{item.get('thread_id')}",
                    session_key=f"bundle-session:{item.get('session_id') or item.get('thread_id')}",
                    user_text=item.get("user_text") or "", reply=item.get("reply") or "", at=at,
                    mode=item.get("mode") or "IMPORT", topic=item.get("topic") or "imported",
                    source=item.get("source") or "text", request_id=item.get("request_id"))
    # A bundle written before lines existed has none: the importer derives them from user_text and reply.
    record.lines = [LineRecord(line.get("key"), line["speaker"], line["text"], from_iso(line.get("at")) or at)
                    for line in item.get("lines") or []]
    return record


def _import_chunks(session: Session, user_id: str, chunks: list[dict[str, Any]], ids: dict[str, int]) -> None:
    rows = [{"user_id": user_id, "exchange_id": ids[c["exchange_key"]], "status": c["status"], "chunk": c["chunk"],
             "salience": c.get("salience"), "model": c.get("model"), "error": c.get("error")}
            for c in chunks if c.get("exchange_key") in ids]
    if rows:
        session.execute(insert(MemoryChunk).values(rows).on_conflict_do_nothing(index_elements=["exchange_id"]))


def _import_facts(session: Session, embedder: Embedder, user_id: str, facts: list[dict[str, Any]],
                  ids: dict[str, int]) -> None:
    present = {fact_key_of(f): f for f in session.scalars(select(Fact).where(Fact.user_id == user_id))}
    fresh = [f for f in facts if f["key"] not in present and f.get("speaker", "user") == "user"]
    vectors = embedder.embed_many([f["text"] for f in fresh]) if fresh else []
    for item, vector in zip(fresh, vectors, strict=True):
        fact = Fact(user_id=user_id, text=item["text"], subject=item.get("subject"), predicate=item.get("predicate"),
                    object=item.get("object"), speaker="user", confidence=item["confidence"],
                    salience=item["salience"], mentions=item.get("mentions") or 1, embedding=vector,
                    embedding_model=embedder.model_id, external_id=item["key"],
                    source_exchange_ids=[ids[k] for k in item.get("source_exchange_keys", []) if k in ids],
                    superseded_at=from_iso(item.get("superseded_at")), access_count=item.get("access_count") or 0,
                    created_at=from_iso(item.get("created_at")), updated_at=from_iso(item.get("updated_at")))
        fact.fact_key = fact_key(fact.subject, fact.predicate)
        session.add(fact)
        present[item["key"]] = fact
    session.flush()
    for item in facts:
        newer = present.get(item.get("superseded_by_key") or "")
        if newer is not None and item["key"] in present:
            present[item["key"]].superseded_by = newer.id


def _import_episodes(session: Session, embedder: Embedder, user_id: str, episodes: list[dict[str, Any]],
                     ids: dict[str, int]) -> None:
    for item in episodes:
        exchange_ids = [ids[k] for k in item.get("exchange_keys", []) if k in ids]
        session_id = _episode_session(session, user_id, item, exchange_ids)
        values = {key: item.get(key) for key in ("title", "gist", "summary", "intent", "emotion", "outcome",
                                                 "salience", "model")}
        values.update(open_loops=item.get("open_loops") or [], started_at=from_iso(item.get("started_at")),
                      ended_at=from_iso(item.get("ended_at")), exchange_ids=exchange_ids)
        session.execute(insert(Episode).values(
            user_id=user_id, session_id=session_id, embedding=embedder.embed(episode_embedding_text(values)),
            embedding_model=embedder.model_id, **values).on_conflict_do_nothing(
            index_elements=["user_id", "session_id"]))


def _episode_session(session: Session, user_id: str, item: dict[str, Any], exchange_ids: list[int]) -> str:
    """The session the episode belongs to here: the one its exchanges are in, else a derived id."""
    if exchange_ids:
        current = session.scalar(select(Exchange.session_id).where(Exchange.id == exchange_ids[0]))
        if current:
            return current
    return session_id_for(user_id, f"bundle-session:{item['session_id']}")
