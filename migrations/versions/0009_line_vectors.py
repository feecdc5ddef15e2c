"""Line vectors: a named speaker's turns carry their own embedding (speaker-aware recall).

A question about a person ("What activities does Melanie partake in?") is answered by that
person's own turns, spread over many sessions, that share no word with the question but the
name. Recall ranks the named speaker's turns by the similarity of each turn (not of the whole
exchange) to the question without the name. Only turns of a named speaker get a vector: a chat's
"user" and "assistant" turns are never asked about by name, so they cost nothing.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE exchange_lines ADD COLUMN embedding vector(384)")
    # The speaker arm reads one speaker's turns of one user: names are matched case-blind.
    op.execute("CREATE INDEX ix_exchange_lines_speaker ON exchange_lines (user_id, lower(speaker))")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_exchange_lines_speaker")
    op.execute("ALTER TABLE exchange_lines DROP COLUMN IF EXISTS embedding")
