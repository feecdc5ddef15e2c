"""Recall receipts: which remembered items went into a reply's prompt.

Each routing decision row keeps the list of facts, episodes and exchanges that context
assembly put into the prompt (kind, id, a short text, relevance), so the chat page can show
"what I remembered" under each reply.

Revision ID: 0008
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0008"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("routing_decisions",
                  sa.Column("recalled", JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")))


def downgrade() -> None:
    op.drop_column("routing_decisions", "recalled")
