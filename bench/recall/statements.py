"""Where a recall's time goes: each SQL statement timed (and EXPLAIN ANALYZE'd), the rest is Python.

Used by ``python -m bench.recall --profile`` (scale.py): SQLAlchemy's cursor events time every statement a recall
sends; a statement is named by the function of services/memory that sent it (the first frame
of the call stack inside that package), so the table reads "turns.line_terms 3.1 ms". Statements sent
from another thread (``sidearms``: the exchange arms on a second connection) are timed alike; they overlap
the others (OVERLAPPED), so the Python part is the wall time less the other statements only.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from bench.recall.pair import backend_cpu_ns

PACKAGE = "services/memory/"
OVERLAPPED = ("sidearms.",)  # labels of statements run beside the others, on another connection


def _caller() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if PACKAGE in path and not (path.endswith("/recall.py") and frame.f_code.co_name == "recall"):
            return f"{path.rsplit('/', 1)[-1][:-3]}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "other"


class StatementTimer:
    """Times every statement on ``engine`` while active, by the memory function that sent it."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.active = False
        self.current: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self.server_cpu: dict[str, float] = defaultdict(float)  # ms of the backend's CPU, over all recordings
        self.captured: list[tuple[str, str, Any]] = []  # (label, statement, parameters) of the last recall
        self._started: dict[int, list[tuple[str, float, int, int]]] = defaultdict(list)  # by thread
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if self.active:
            label = _caller()
            backend = conn.connection.driver_connection.info.backend_pid
            self._started[threading.get_ident()].append((label, time.perf_counter(), backend, backend_cpu_ns(backend)))
            self.captured.append((label, statement, parameters))

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        started_here = self._started[threading.get_ident()]
        if self.active and started_here:
            label, started, backend, cpu = started_here.pop()
            self.current[label] += (time.perf_counter() - started) * 1000
            self.server_cpu[label] += (backend_cpu_ns(backend) - cpu) / 1e6
            self.counts[label] += 1

    @contextmanager
    def recording(self) -> Iterator[None]:
        self.current, self.captured, self.active = defaultdict(float), [], True
        try:
            yield
        finally:
            self.active = False

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._before)
        event.remove(self.engine, "after_cursor_execute", self._after)


def print_profile(rows: list[dict[str, float]], counts: dict[str, int], queries: int,
                  server_cpu: dict[str, float] | None = None) -> None:
    """Median and p95 per part over the profiled recalls (ms), statements per recall and, per statement
    kind, the mean CPU its PostgreSQL backend spent (which other processes' load does not inflate much)."""
    labels = sorted({label for row in rows for label in row}, key=lambda label: -np.median([r.get(label, 0.0)
                                                                                             for r in rows]))
    server_cpu = server_cpu or {}
    print(f"\nprofile over {queries} recalls (ms; parts do not add up at p95):")
    print(f"{'part':<34} {'p50':>7} {'p95':>7} {'statements/recall':>18} {'server CPU/recall':>18}")
    for label in labels:
        values = [row.get(label, 0.0) for row in rows]
        per = counts.get(label, 0) / queries if label in counts else 0
        cpu = f"{server_cpu[label] / queries:.2f}" if label in server_cpu else ""
        print(f"{label:<34} {np.median(values):>7.2f} {np.percentile(values, 95):>7.2f} "
              f"{(f'{per:.1f}' if per else ''):>18} {cpu:>18}")
    print(f"statements per recall: {sum(counts.values()) / queries:.1f}")


def explain(session: Session, captured: list[tuple[str, str, Any]]) -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of each statement of one recall, as it was sent."""
    cursor = session.connection().connection.driver_connection.cursor()
    for label, statement, parameters in captured:
        if not statement.lstrip().upper().startswith(("SELECT", "WITH", "(")):  # "(": a UNION of arms
            continue
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement, parameters)
        plan = [row[0] for row in cursor.fetchall()]
        print(f"\n--- {label}\n" + "\n".join(plan))
    session.execute(text("SELECT 1"))
