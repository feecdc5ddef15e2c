"""Vectors follow an import in the background: a partial index of the exchanges still without one.

``engram import`` stores exchanges, their lines and the full-text data without computing any
vector; the vector backfill job (services/memory/vectors.py) then takes the oldest exchanges
whose ``embedding`` is NULL, embeds them with their named speakers' lines, and stores the
vectors. This index holds only those rows (a few, or none, once the backfill has caught up),
so finding the next batch and counting what waits costs nothing at 100k stored exchanges.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_exchanges_vector_pending ON exchanges (id) WHERE embedding IS NULL")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_exchanges_vector_pending")
