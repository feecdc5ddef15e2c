"""The assistant's own reflections about a person — drift thoughts and autobiographies — in the export bundle.

They are the person's data too (written about them, from their memories), so export carries them
and import restores them. Each row keeps the ``fire_id`` of the periodic fire that wrote it; that id
is unique per user, so importing the same bundle twice stores nothing twice, and a bundle from
another user lands as new rows. Database ids (the episodes an autobiography was written from, the
exchanges a thought came from) mean nothing in another database and are left out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.cognition.models import Autobiography, DriftGist
from services.db import insert
from services.memory.models import from_iso, iso

SECTIONS = {"thoughts": ("text",), "autobiographies": ("narrative",)}
TIME_KEYS = ("memory_until", "pushed_at", "episodes_until")


def export_reflections(session: Session, user_id: str) -> dict[str, list[dict[str, Any]]]:
    """The user's drift thoughts and autobiographies, oldest first, JSON-ready."""
    thoughts = session.scalars(select(DriftGist).where(DriftGist.user_id == user_id)
                               .order_by(DriftGist.created_at, DriftGist.id))
    stories = session.scalars(select(Autobiography).where(Autobiography.user_id == user_id)
                              .order_by(Autobiography.created_at, Autobiography.id))
    return {
        "thoughts": [{"fire_id": g.fire_id, "topic": g.topic, "text": g.text, "relevance": g.relevance,
                      "seeds": list(g.seeds or []), "memory_until": iso(g.memory_until),
                      "pushed_at": iso(g.pushed_at), "model": g.model, "created_at": iso(g.created_at)}
                     for g in thoughts],
        "autobiographies": [{"fire_id": a.fire_id, "narrative": a.narrative,
                             "episodes_until": iso(a.episodes_until), "model": a.model,
                             "created_at": iso(a.created_at)}
                            for a in stories],
    }


def check_reflection(section: str, index: int, item: dict[str, Any]) -> str | None:
    """The first problem of a thoughts/autobiographies entry that import would trip over, or None."""
    text_key = SECTIONS[section][0]
    if not isinstance(item.get(text_key), str) or not item[text_key].strip():
        return f"{section}[{index}].{text_key} must be a non-empty string"
    if "seeds" in item and not isinstance(item["seeds"], list):
        return f"{section}[{index}].seeds must be a list"
    if "relevance" in item and not isinstance(item["relevance"], int | float):
        return f"{section}[{index}].relevance must be a number"
    return None


def import_reflections(session: Session, user_id: str, bundle: dict[str, Any]) -> dict[str, int]:
    """Restore both sections for ``user_id``; returns how many rows each added (0 on a repeat)."""
    return {"thoughts": _import_thoughts(session, user_id, bundle.get("thoughts", [])),
            "autobiographies": _import_autobiographies(session, user_id, bundle.get("autobiographies", []))}


def _fire_id(entry: dict[str, Any], text: str) -> str:
    if entry.get("fire_id"):
        return str(entry["fire_id"])[:200]
    # A hand-written bundle without one: the content and time identify the row instead.
    return "import:" + hashlib.sha256(f"{text}\0{entry.get('created_at')}".encode()).hexdigest()[:40]


def _import_thoughts(session: Session, user_id: str, thoughts: list[dict[str, Any]]) -> int:
    added = 0
    for entry in thoughts:
        created = from_iso(entry.get("created_at"))
        memory_until = from_iso(entry.get("memory_until")) or created or dt.datetime.now(dt.UTC)
        values = {"user_id": user_id, "fire_id": _fire_id(entry, entry["text"]),
                  "topic": str(entry.get("topic") or "")[:200], "text": entry["text"],
                  "relevance": float(entry.get("relevance") or 0.0),
                  "seeds": [str(seed) for seed in entry.get("seeds") or []], "memory_until": memory_until,
                  "pushed_at": from_iso(entry.get("pushed_at")), "model": entry.get("model"),
                  **({"created_at": created} if created else {})}
        added += session.execute(insert(DriftGist).values(**values).on_conflict_do_nothing(
            constraint="uq_drift_gists_user_fire").returning(DriftGist.id)).first() is not None
    return added


def _import_autobiographies(session: Session, user_id: str, stories: list[dict[str, Any]]) -> int:
    added = 0
    for entry in stories:
        created = from_iso(entry.get("created_at"))
        values = {"user_id": user_id, "fire_id": _fire_id(entry, entry["narrative"]), "narrative": entry["narrative"],
                  "episode_ids": [], "model": entry.get("model"),
                  "episodes_until": from_iso(entry.get("episodes_until")) or created or dt.datetime.now(dt.UTC),
                  **({"created_at": created} if created else {})}
        added += session.execute(insert(Autobiography).values(**values).on_conflict_do_nothing(
            constraint="uq_autobiographies_user_fire").returning(Autobiography.id)).first() is not None
    return added
