"""ACT skills: scheduled reminders and prompts, named lists with items, goals.

Times are stored in UTC (``timestamptz``) next to the IANA zone they were set in, so a
recurrence ("every day at 9") is computed in the person's local time, across DST changes.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _timestamps() -> list[sa.Column]:
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    ]


def _user_column() -> sa.Column:
    return sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "scheduled_items",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_column(),
        sa.Column("kind", sa.String(16), nullable=False, server_default="reminder"),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False, server_default="UTC"),
        sa.Column("recurrence", sa.String(200), nullable=True),
        sa.Column("status", sa.String(16), nullable=False, server_default="active"),
        sa.Column("created_request_id", sa.String(64), nullable=True),
        *_timestamps(),
        sa.Column("fired_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('reminder', 'prompt')", name="ck_scheduled_items_kind"),
        sa.CheckConstraint("status IN ('active', 'done', 'cancelled')", name="ck_scheduled_items_status"),
    )
    op.create_index("ix_scheduled_items_user_id", "scheduled_items", ["user_id"])
    # The scheduler's query: active items that are due.
    op.create_index("ix_scheduled_items_due", "scheduled_items", ["due_at"],
                    postgresql_where=sa.text("status = 'active'"))
    op.create_table(
        "lists",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_column(),
        sa.Column("name", sa.String(200), nullable=False),
        *_timestamps(),
        # Its leading column serves lookups by user_id too, so lists need no separate user_id index.
        sa.UniqueConstraint("user_id", "name", name="uq_lists_user_name"),
    )
    op.create_table(
        "list_items",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("list_id", sa.BigInteger, sa.ForeignKey("lists.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("checked", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("position", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("ix_list_items_list_id", "list_items", ["list_id"])
    op.create_table(
        "goals",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_column(),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False, server_default="active"),
        sa.Column("progress", JSONB, nullable=False, server_default="[]"),
        sa.Column("created_request_id", sa.String(64), nullable=True),
        *_timestamps(),
        sa.CheckConstraint("state IN ('active', 'paused', 'done', 'abandoned')", name="ck_goals_state"),
    )
    op.create_index("ix_goals_user_id", "goals", ["user_id"])
    op.create_index("ix_goals_active", "goals", ["updated_at"], postgresql_where=sa.text("state = 'active'"))


def downgrade() -> None:
    op.drop_table("goals")
    op.drop_table("list_items")
    op.drop_table("lists")
    op.drop_table("scheduled_items")
