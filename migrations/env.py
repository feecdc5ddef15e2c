"""Alembic environment: runs on a connection handed in by services/migrate.py, or on DATABASE_URL."""

from __future__ import annotations

import os

import pgvector.sqlalchemy  # noqa: F401  (registers the vector type for autogenerate)
from alembic import context
from sqlalchemy import create_engine

from services.db import Base, sqlalchemy_url

config = context.config
target_metadata = Base.metadata


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    # Plain `alembic upgrade head` from a shell: the one place env is read outside settings,
    # because Alembic's CLI owns this process.
    engine = create_engine(sqlalchemy_url(os.environ["DATABASE_URL"]))
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


run_online()
