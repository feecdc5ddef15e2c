"""Fixtures for running innate skills as a turn would (registered for every test in tests/conftest.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from services.act.config import ActConfig
from services.act.models import ListItem
from services.act.skills.base import SessionGate, SkillContext
from services.act.turn import innate_dispatcher
from services.db import User
from services.zones import zone_of

USER = "bo"
ZONE = "Asia/Tokyo"
NOW = dt.datetime(2030, 1, 15, 3, 0, tzinfo=dt.UTC)  # Tuesday 12:00 in Tokyo


@pytest.fixture
def person(db_engine):
    with db_engine.begin() as connection:
        connection.execute(User.__table__.insert().values(id=USER, timezone=ZONE))
    return USER


@pytest.fixture
def skill(worker_context, person, hash_embedder):
    """Run one action in its own committed transaction, as a turn would; returns the ActionResult."""

    def run(name, arguments, *, config=None, embedder=hash_embedder):
        config = config or ActConfig()
        dispatcher = innate_dispatcher(config)
        with worker_context.sessions.begin() as session:
            ctx = SkillContext(user_id=USER, thread_id="t", request_id="req-1", user_text="", zone=zone_of(ZONE),
                               zone_name=ZONE, now=NOW, config=config, gate=SessionGate(session), embedder=embedder,
                               catalog=dispatcher.catalog())
            return dispatcher.dispatch(name, arguments, ctx)

    return run


@pytest.fixture
def preview(worker_context, person, hash_embedder):
    """The read-only resolution the critic runs before asking to confirm; returns the ActionResult."""

    def run(name, arguments):
        config = ActConfig()
        dispatcher = innate_dispatcher(config)
        skill = dispatcher.skills[name]
        with worker_context.sessions.begin() as session:
            ctx = SkillContext(user_id=USER, thread_id="t", request_id="req-1", user_text="", zone=zone_of(ZONE),
                               zone_name=ZONE, now=NOW, config=config, gate=SessionGate(session),
                               embedder=hash_embedder, catalog=dispatcher.catalog())
            return dispatcher.run(f"{name}.preview", lambda action: skill.preview(action, arguments), ctx)

    return run


def count(db_engine, model) -> int:
    with db_engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(model)).scalar_one()


def items(db_engine) -> list[tuple[str, bool]]:
    with db_engine.connect() as connection:
        return [tuple(row) for row in connection.execute(select(ListItem.text, ListItem.checked)
                                                         .order_by(ListItem.position))]
