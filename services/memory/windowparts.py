"""A long time window's exact arm in two parts, one on each of recall's two connections (``sidearms``).

A month's window arm computes the exact distance of each of its ~4,200 exchanges at 100k (2.7–5 ms of backend CPU).
On the second connection it ran after the HNSW arm (1.4–4.2 ms), while recall's own connection ran the BM25 arm
(~5 ms) and then waited ~3 ms (p95 6) for the second one's ids before window_rows. Split by time, the earlier part
runs on the second connection after the HNSW arm, and the later one inside window_rows, which takes the nearest
``limit`` of its own rows and the earlier part's (sent as arrays): each part's nearest ``limit`` by the same
expression, and the window's nearest ``limit`` are the nearest of those (a row of the window's top is in its part's
top). Same rows, same distances (the same function of the same two vectors); only exact ties at the last place may
fall otherwise, as they may between two plans of the one statement.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from services.memory.search import KINDS
from services.memory.timewords import Window

# A window this long or longer is split: a day's arm (~0.3 ms at 100k) is not worth a statement more.
SPLIT_FROM = dt.timedelta(days=7)
# The second connection's share of the window (its earlier part), by time: before its part it runs the HNSW arm
# (1.4–4.2 ms), while recall's own connection makes the expansion (~1 ms) and runs the BM25 arm (~5 ms) before
# window_rows: the share balances those (bench/recall_rounds.md, rwarm). Which rows come back does not depend on it.
SIDE_SHARE = 0.6
_TIME = KINDS["exchange"].time
PART_SQL = ("SELECT t.id, (t.embedding <=> :qvec) + 0 AS distance FROM exchanges t "
            f"WHERE t.user_id = :user AND {_TIME} >= :{{start}} AND {_TIME} < :{{end}} ORDER BY 2 LIMIT :limit")

Part = list[tuple[int, float]]  # (exchange id, distance), nearest first


def split(window: Window | None) -> tuple[Window, Window] | None:
    """The window's earlier part (the second connection's) and later part (recall's own), or None: not split."""
    if window is None or window[1] - window[0] < SPLIT_FROM:
        return None
    start, end = window
    middle = start + (end - start) * SIDE_SHARE
    return (start, middle), (middle, end)


def part_sql(part: Window, params: dict[str, Any], name: str) -> str:
    """One part's statement (``:user``, ``:qvec``, ``:limit``); its bounds go into ``params`` as ``name``_start and
    ``name``_end (the statement may hold other arms' parameters)."""
    params[f"{name}_start"], params[f"{name}_end"] = part
    return PART_SQL.format(start=f"{name}_start", end=f"{name}_end")


@dataclass(frozen=True)
class Later:
    """A split window's later part (recall's own connection runs it) and the earlier part's rows."""

    window: Window
    earlier: Part


def merged_sql(later: Later, params: dict[str, Any]) -> str:
    """The window arm's ids (``:user``, ``:qvec``, ``:limit``): the ``limit`` nearest of the earlier part's rows and
    the later part's, run here; its other values go into ``params``."""
    params["earlier_ids"] = [exchange for exchange, _ in later.earlier]
    params["earlier_distances"] = [distance for _, distance in later.earlier]
    earlier = ("SELECT unnest(CAST(:earlier_ids AS bigint[])) AS id, "
               "unnest(CAST(:earlier_distances AS float8[])) AS distance")
    return (f"SELECT id FROM ({earlier} UNION ALL ({part_sql(later.window, params, 'later')})) m "
            "ORDER BY distance LIMIT :limit")
