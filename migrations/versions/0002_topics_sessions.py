"""Topics with centroids, conversation sessions, and the exchange search index.

Every stored exchange carries its embedding (HNSW, cosine) and a generated full-text vector
(GIN), so recall works the moment an exchange is stored, before any LLM enrichment.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

DIM = 384


def upgrade() -> None:
    op.create_table(
        "topics",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("centroid", Vector(DIM), nullable=False),
        sa.Column("message_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.UniqueConstraint("user_id", "name", name="uq_topics_user_name"),
    )
    op.create_index("ix_topics_user_id", "topics", ["user_id"])
    op.execute("CREATE INDEX ix_topics_centroid ON topics USING hnsw (centroid vector_cosine_ops)")
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("thread_id", sa.String(64), sa.ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("topic", sa.String(200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("last_active_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("close_reason", sa.String(32), nullable=True),
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"])
    op.create_index("ix_sessions_open", "sessions", ["last_active_at"], postgresql_where=sa.text("ended_at IS NULL"))
    session_fk = sa.ForeignKey("sessions.id", ondelete="SET NULL")
    op.add_column("exchanges", sa.Column("session_id", sa.String(64), session_fk, nullable=True))
    op.add_column("exchanges", sa.Column("embedding", Vector(DIM), nullable=True))
    op.add_column("exchanges", sa.Column("embedding_model", sa.String(64), nullable=True))
    op.add_column("exchanges", sa.Column("external_id", sa.String(200), nullable=True))
    op.add_column("exchanges", sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "ALTER TABLE exchanges ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(to_tsvector('english', coalesce(user_text, '') || ' ' || coalesce(reply, ''))) STORED"
    )
    op.create_index("ix_exchanges_session_id", "exchanges", ["session_id"])
    op.create_index(
        "uq_exchanges_user_external", "exchanges", ["user_id", "external_id"], unique=True,
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.execute("CREATE INDEX ix_exchanges_embedding ON exchanges USING hnsw (embedding vector_cosine_ops)")
    op.execute("CREATE INDEX ix_exchanges_search ON exchanges USING gin (search)")


def downgrade() -> None:
    op.drop_index("ix_exchanges_search", table_name="exchanges")
    op.drop_index("ix_exchanges_embedding", table_name="exchanges")
    op.drop_index("uq_exchanges_user_external", table_name="exchanges")
    op.drop_index("ix_exchanges_session_id", table_name="exchanges")
    for column in ("search", "occurred_at", "external_id", "embedding_model", "embedding", "session_id"):
        op.drop_column("exchanges", column)
    op.drop_table("sessions")
    op.drop_table("topics")
