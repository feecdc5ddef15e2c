"""The spine: users, threads, exchanges, routing decisions (and the vector extension).

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "users",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("timezone", sa.String(64), nullable=False, server_default="UTC"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_table(
        "threads",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("last_active_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("ix_threads_user_id", "threads", ["user_id"])
    op.create_table(
        "exchanges",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("request_id", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("thread_id", sa.String(64), sa.ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("source", sa.String(16), nullable=False, server_default="text"),
        sa.Column("user_text", sa.Text, nullable=False),
        sa.Column("reply", sa.Text, nullable=False, server_default=""),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("topic", sa.String(200), nullable=False, server_default="general"),
        sa.Column("confidence", sa.Float, nullable=False, server_default="0"),
        sa.Column("tool_trail", JSONB, nullable=False, server_default="[]"),
        sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("total_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("timings", JSONB, nullable=False, server_default="{}"),
        sa.Column("fallback", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("ix_exchanges_user_id", "exchanges", ["user_id"])
    op.create_index("ix_exchanges_thread_id", "exchanges", ["thread_id"])
    op.create_table(
        "routing_decisions",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("request_id", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("thread_id", sa.String(64), sa.ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("exchange_id", sa.BigInteger, sa.ForeignKey("exchanges.id", ondelete="CASCADE"), nullable=True),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float, nullable=False, server_default="0"),
        sa.Column("scores", JSONB, nullable=False, server_default="{}"),
        sa.Column("signals", JSONB, nullable=False, server_default="{}"),
        sa.Column("margin", sa.Float, nullable=False, server_default="0"),
        sa.Column("tiebreaker_used", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("tiebreaker_result", sa.String(16), nullable=True),
        sa.Column("latency_ms", sa.Float, nullable=False, server_default="0"),
        sa.Column("weights_version", sa.String(64), nullable=True),
        sa.Column("feedback", sa.String(32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("ix_routing_decisions_user_id", "routing_decisions", ["user_id"])
    op.create_index("ix_routing_decisions_thread_id", "routing_decisions", ["thread_id"])


def downgrade() -> None:
    op.drop_table("routing_decisions")
    op.drop_table("exchanges")
    op.drop_table("threads")
    op.drop_table("users")
