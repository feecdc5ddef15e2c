"""The ACT turn inside the digest's transaction: bounded statements, and steps that wait for the commit."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import event, text
from sqlalchemy.orm import Session

logger = logging.getLogger(__name__)


def after_commit(session: Session, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the session's transaction commits (never if it rolls back)."""

    fired: list[bool] = []  # the listener cannot remove itself while SQLAlchemy dispatches the event

    def run(committed: Session) -> None:
        # SQLAlchemy also announces a savepoint's commit (each skill runs in one): wait for the real one.
        if committed.in_nested_transaction() or fired:
            return
        fired.append(True)
        try:
            callback()
        except Exception:  # the turn is stored; a Redis hiccup here must not fail it
            logger.exception("after-commit step of the ACT turn failed")

    event.listen(session, "after_commit", run)


@contextmanager
def statement_timeout(session: Session, seconds: float) -> Iterator[None]:
    """Bound every SQL statement of the loop (a skill stuck on a lock ends), then restore the old limit."""
    previous = session.execute(text("SHOW statement_timeout")).scalar_one()
    session.execute(text("SELECT set_config('statement_timeout', :value, true)"),
                    {"value": f"{int(seconds * 1000)}ms"})
    yield
    # Not in a finally: after a failure the transaction is rolled back, and the setting with it.
    session.execute(text("SELECT set_config('statement_timeout', :value, true)"), {"value": previous})
