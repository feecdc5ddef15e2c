"""Access reinforcement: each item recall returns counts an access (its ``access`` boost at the next recall)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import text
from sqlalchemy.orm import Session

from services.memory.search import TABLES


def reinforce(session: Session, user_id: str, ids_by_kind: dict[str, list[int]], now: dt.datetime) -> None:
    """Count an access of each returned item (rows locked in id order, so concurrent recalls cannot deadlock)."""
    for kind in ("fact", "episode"):
        ids = sorted(set(ids_by_kind.get(kind, [])))
        if ids:
            table = TABLES[kind]
            session.execute(
                text(f"UPDATE {table} SET access_count = access_count + 1, last_accessed_at = :now FROM "
                     f"(SELECT id FROM {table} WHERE user_id = :user AND id = ANY(:ids) ORDER BY id FOR UPDATE) s "
                     f"WHERE {table}.id = s.id"),
                {"user": user_id, "ids": ids, "now": now},
            )
    ids = sorted(set(ids_by_kind.get("exchange", [])))
    if ids:
        session.execute(
            text("INSERT INTO exchange_access (exchange_id, user_id, access_count, last_accessed_at) "
                 "SELECT id, user_id, 1, :now FROM exchanges WHERE user_id = :user AND id = ANY(:ids) ORDER BY id "
                 "ON CONFLICT (exchange_id) DO UPDATE SET access_count = exchange_access.access_count + 1, "
                 "last_accessed_at = excluded.last_accessed_at"),
            {"user": user_id, "ids": ids, "now": now},
        )
