"""The exchanges around a recalled one in its thread (recall's ``neighbours`` mode: a hit with its context)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session


def of_exchanges(session: Session, user_id: str, exchange_ids: list[int],
                 width: int) -> dict[int, list[dict[str, Any]]]:
    """For each exchange, the ``width`` turns before and after it in its thread, in time order."""
    if not exchange_ids or width < 1:
        return {}
    time = "coalesce({a}.occurred_at, {a}.created_at)"
    hit_t, row_t = time.format(a="h"), time.format(a="e")
    columns = "e.id, e.user_text, e.reply, e.external_id"
    statement = text(
        f"SELECT h.id AS hit, n.* FROM exchanges h CROSS JOIN LATERAL ("
        f"(SELECT {columns}, -1 AS side, {row_t} AS at FROM exchanges e WHERE e.thread_id = h.thread_id "
        f"AND e.user_id = :user AND ({row_t}, e.id) < ({hit_t}, h.id) ORDER BY {row_t} DESC, e.id DESC LIMIT :w) "
        f"UNION ALL "
        f"(SELECT {columns}, 1 AS side, {row_t} AS at FROM exchanges e WHERE e.thread_id = h.thread_id "
        f"AND e.user_id = :user AND ({row_t}, e.id) > ({hit_t}, h.id) ORDER BY {row_t}, e.id LIMIT :w)"
        f") n WHERE h.user_id = :user AND h.id = ANY(:ids)"
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for row in session.execute(statement, {"user": user_id, "ids": exchange_ids, "w": width}).mappings():
        found.setdefault(int(row["hit"]), []).append(dict(row))
    for rows in found.values():
        rows.sort(key=lambda r: (r["at"], r["id"]))
    return found
