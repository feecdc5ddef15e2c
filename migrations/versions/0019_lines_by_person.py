"""A person's turns in the order they were stored: an index on ``exchange_lines (user_id, id)``.

BM25's statistics come from a sample of the person's turns (``services.memory.lineterms``), until now "their first
``length_sample`` rows in the table's physical order", read by whatever plan the planner chose. With one person
that was a sequential scan from the table's start; with a thousand it was a scan through everyone's rows before
theirs (1.5 s for a person whose turns begin mid-table, bench/tenants.py), or an index scan in speaker order that
took another sample than the kept counts assumed. The sample is now their first turns by id, read from this
index and nothing else; the same index serves a small person's full-text matches from their own rows.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_exchange_lines_user_id ON exchange_lines (user_id, id)")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_exchange_lines_user_id")
