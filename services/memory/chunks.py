"""Memory chunks: the LLM's reading of one exchange, validated, stored beside it with its facts.

A chunk is a JSON object::

    {"gists": ["..."], "facts": [{"text", "speaker": "user"|"assistant", "confidence", "subject"?,
     "predicate"?, "object"?}], "entities": [{"name", "type"}], "emotion": "...", "salience": 0.0-1.0,
     "open_loops": ["..."]}

``validate_chunk`` normalises what a model returns or raises ``ChunkInvalid``; salience outside
0–1 is an error, not something to rescale (the system we replace stored 1–10 and read 0–1).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db import Exchange, insert
from services.embeddings import Embedder
from services.llm.client import LLMClient
from services.llm.completion import Completion
from services.llm.output import with_note
from services.memory.config import FactsConfig
from services.memory.facts import FactResult, clean_text, remember_fact
from services.memory.models import MemoryChunk

logger = logging.getLogger(__name__)

SPEAKERS = ("user", "assistant")
MAX_ITEMS = 12
CHUNK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "gists": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        "facts": {"type": "array", "items": {"type": "object", "properties": {
            "text": {"type": "string"}, "speaker": {"type": "string", "enum": list(SPEAKERS)},
            "confidence": {"type": "number"}, "subject": {"type": "string"}, "predicate": {"type": "string"},
            "object": {"type": "string"}}, "required": ["text", "speaker", "confidence"]}},
        "entities": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "type": {"type": "string"}}, "required": ["name"]}},
        "emotion": {"type": "string"},
        "salience": {"type": "number"},
        "open_loops": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["gists", "facts", "entities", "emotion", "salience", "open_loops"],
}


class ChunkInvalid(ValueError):
    """The model's JSON does not have the chunk's shape."""


@dataclass
class StoredChunk:
    facts: list[FactResult] = field(default_factory=list)
    skipped_assistant_facts: int = 0


def unit_interval(value: Any, name: str) -> float:
    """A number in 0..1, or ``ChunkInvalid``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ChunkInvalid(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ChunkInvalid(f"{name} must be between 0 and 1, got {value!r}")
    return float(value)


def string_list(value: Any, name: str) -> list[str]:
    """Up to ``MAX_ITEMS`` non-blank strings of at most 300 characters (None: none)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ChunkInvalid(f"{name} must be a list of strings")
    return [clean_text(item, 300) for item in value if item.strip()][:MAX_ITEMS]


def _fact(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
        raise ChunkInvalid("each fact needs a non-empty 'text'")
    speaker = str(item.get("speaker", "")).strip().lower()
    if speaker not in SPEAKERS:
        raise ChunkInvalid(f"fact speaker must be 'user' or 'assistant', got {item.get('speaker')!r}")
    fact: dict[str, Any] = {"text": clean_text(item["text"]), "speaker": speaker,
                            "confidence": unit_interval(item.get("confidence", 1.0), "fact confidence")}
    if item.get("salience") is not None:  # one fact worth more than its chunk (identity.IDENTITY)
        fact["salience"] = unit_interval(item["salience"], "fact salience")
    for key in ("subject", "predicate", "object"):
        if isinstance(item.get(key), str) and item[key].strip():
            fact[key] = clean_text(item[key], 200)
    return fact


def _entity(item: Any) -> dict[str, str]:
    if isinstance(item, str) and item.strip():
        return {"name": clean_text(item, 120), "type": "thing"}
    if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip():
        return {"name": clean_text(item["name"], 120), "type": clean_text(str(item.get("type") or "thing"), 40)}
    raise ChunkInvalid("each entity needs a 'name'")


def validate_chunk(data: Any) -> dict[str, Any]:
    """The normalised chunk, or ``ChunkInvalid`` naming the first problem."""
    if not isinstance(data, dict):
        raise ChunkInvalid("a chunk must be a JSON object")
    gists = data.get("gists", data.get("gist"))
    gists = [gists] if isinstance(gists, str) else gists
    gists = string_list(gists, "gists")
    if not gists:
        raise ChunkInvalid("a chunk needs at least one gist")
    facts = data.get("facts") or []
    entities = data.get("entities") or []
    if not isinstance(facts, list) or not isinstance(entities, list):
        raise ChunkInvalid("facts and entities must be lists")
    emotion = data.get("emotion")
    if emotion is not None and not isinstance(emotion, str):
        raise ChunkInvalid("emotion must be a string")
    return {
        "gists": gists[:3],
        "facts": [_fact(item) for item in facts][:MAX_ITEMS],
        "entities": [_entity(item) for item in entities][:MAX_ITEMS],
        "emotion": clean_text(emotion or "neutral", 60),
        "salience": unit_interval(data.get("salience"), "salience"),
        "open_loops": string_list(data.get("open_loops"), "open_loops"),
    }


def chunk_exists(session: Session, exchange_id: int) -> bool:
    return session.scalar(select(MemoryChunk.id).where(MemoryChunk.exchange_id == exchange_id)) is not None


def store_chunk(session: Session, embedder: Embedder, exchange: Exchange, chunk: dict[str, Any], *, model: str | None,
                facts_config: FactsConfig | None = None) -> StoredChunk | None:
    """Store a validated chunk and its user facts; None when the exchange already has a chunk (a retried job)."""
    chunk_id = session.scalar(
        insert(MemoryChunk)
        .values(user_id=exchange.user_id, exchange_id=exchange.id, session_id=exchange.session_id, status="ok",
                chunk=chunk, salience=chunk["salience"], model=model)
        .on_conflict_do_nothing(index_elements=["exchange_id"])
        .returning(MemoryChunk.id)
    )
    if chunk_id is None:
        return None
    stored = StoredChunk()
    user_facts = [fact for fact in chunk["facts"] if fact["speaker"] == "user"]
    stored.skipped_assistant_facts = len(chunk["facts"]) - len(user_facts)
    vectors = embedder.embed_many([fact["text"] for fact in user_facts]) if user_facts else []
    for fact, vector in zip(user_facts, vectors, strict=True):
        stored.facts.append(remember_fact(
            session, embedder, exchange.user_id, fact["text"], confidence=fact["confidence"],
            source_exchange_id=exchange.id, salience=fact.get("salience", chunk["salience"]),
            subject=fact.get("subject"), predicate=fact.get("predicate"), object=fact.get("object"), embedding=vector,
            config=facts_config))
    return stored


def store_failure(session: Session, exchange: Exchange, error: str) -> bool:
    """Record that enrichment gave up on this exchange (so episodes stop waiting for it)."""
    chunk_id = session.scalar(
        insert(MemoryChunk)
        .values(user_id=exchange.user_id, exchange_id=exchange.id, session_id=exchange.session_id, status="failed",
                chunk=None, salience=None, model=None, error=error[:1000])
        .on_conflict_do_nothing(index_elements=["exchange_id"])
        .returning(MemoryChunk.id)
    )
    return chunk_id is not None


def ask_validated(
    llm: LLMClient,
    role: str,
    messages: list[dict[str, Any]],
    schema: dict[str, Any] | None,
    validate: Callable[[Any], dict[str, Any]],
) -> tuple[dict[str, Any], Completion]:
    """JSON from the LLM, validated; a wrong shape gets one more try with the problem named.

    Raises ``ChunkInvalid`` when the second answer is wrong too (and the LLM's own errors as they come).
    """
    data, completion = llm.complete_json(role, messages, schema=schema)
    try:
        return validate(data), completion
    except ChunkInvalid as exc:
        logger.warning("%s answered with the wrong shape (%s); asking once more", role, exc)
        note = f"Your JSON did not match the required shape: {exc}. Answer again with the exact keys."
        data, completion = llm.complete_json(role, with_note(messages, note), schema=schema)
        return validate(data), completion
