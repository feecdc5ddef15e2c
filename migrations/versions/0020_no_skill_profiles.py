"""Skill profiles go: ``skill_profiles`` is dropped.

The profile-enrichment job counted each person's ACT tool calls into this table every six hours for the ACT
prompt's "how this person has used the skills" lines. The compact prompts (the local model's, the default) never
read them, no benchmark measured a gain from them with the full prompts, and every row is derived from the
exchanges' stored tool trails, so nothing is lost.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("skill_profiles")


def downgrade() -> None:
    op.create_table(
        "skill_profiles",
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("skill", sa.String(64), nullable=False),
        sa.Column("uses", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("details", JSONB, nullable=False, server_default="{}"),
        sa.Column("fire_id", sa.String(200), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("user_id", "skill", name="pk_skill_profiles"),
    )
