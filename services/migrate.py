"""Schema upgrades through Alembic, serialised by a PostgreSQL advisory lock."""

from __future__ import annotations

import logging

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Engine

from services.settings import PROJECT_ROOT

logger = logging.getLogger(__name__)

# Any constant works; it only has to be the same for every Engram process.
MIGRATION_LOCK_ID = 727_001


def alembic_config() -> Config:
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    return config


def upgrade_head(engine: Engine) -> str:
    """Upgrade to head under an advisory lock, so processes starting together don't race."""
    config = alembic_config()
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": MIGRATION_LOCK_ID})
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
            revision = MigrationContext.configure(connection).get_current_revision() or "base"
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": MIGRATION_LOCK_ID})
            connection.commit()
    logger.info("database at revision %s", revision, extra={"revision": revision})
    return revision


def head_revision() -> str | None:
    """The newest migration's revision (reads the migration scripts: call once and keep it)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (one query; it also proves the database answers)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
