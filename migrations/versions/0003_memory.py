"""Memory: chunks per exchange, semantic facts, episodes per session, exchange access counts.

Every table carries ``user_id`` with ON DELETE CASCADE from ``users``, so deleting a user
row purges their memory; every searchable table has an HNSW cosine index on its embedding
and a GIN index on a generated full-text vector.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

DIM = 384


def _user_fk() -> sa.Column:
    return sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False)


def _salience() -> sa.Column:
    return sa.Column("salience", sa.Float, nullable=False, server_default="0.5")


def _now(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now())


def upgrade() -> None:
    _memory_chunks()
    _facts()
    _episodes()
    _exchange_access()
    # Neighbour expansion and time-window recall walk a thread (or a user's history) in time order.
    op.execute("CREATE INDEX ix_exchanges_thread_time ON exchanges "
               "(thread_id, (coalesce(occurred_at, created_at)), id)")
    op.execute("CREATE INDEX ix_exchanges_user_time ON exchanges (user_id, (coalesce(occurred_at, created_at)))")


def _memory_chunks() -> None:
    op.create_table(
        "memory_chunks",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("exchange_id", sa.BigInteger, sa.ForeignKey("exchanges.id", ondelete="CASCADE"), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("chunk", JSONB, nullable=True),
        sa.Column("salience", sa.Float, nullable=True),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        _now("created_at"),
        sa.UniqueConstraint("exchange_id", name="uq_memory_chunks_exchange"),
        sa.CheckConstraint("status IN ('ok', 'failed')", name="ck_memory_chunks_status"),
        sa.CheckConstraint("salience IS NULL OR (salience >= 0 AND salience <= 1)", name="ck_memory_chunks_salience"),
    )
    op.create_index("ix_memory_chunks_user_id", "memory_chunks", ["user_id"])
    op.create_index("ix_memory_chunks_session_id", "memory_chunks", ["session_id"])


def _facts() -> None:
    op.create_table(
        "facts",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("subject", sa.String(200), nullable=True),
        sa.Column("predicate", sa.String(200), nullable=True),
        sa.Column("object", sa.Text, nullable=True),
        sa.Column("fact_key", sa.String(400), nullable=True),
        # Only what the person said becomes a fact about them; the database refuses anything else.
        sa.Column("speaker", sa.String(16), nullable=False, server_default="user"),
        sa.Column("confidence", sa.Float, nullable=False, server_default="1"),
        _salience(),
        sa.Column("embedding", Vector(DIM), nullable=True),
        sa.Column("embedding_model", sa.String(64), nullable=True),
        sa.Column("source_exchange_ids", ARRAY(sa.BigInteger), nullable=False, server_default="{}"),
        sa.Column("external_id", sa.String(200), nullable=True),
        sa.Column("mentions", sa.Integer, nullable=False, server_default="1"),
        sa.Column("superseded_by", sa.BigInteger, sa.ForeignKey("facts.id", ondelete="SET NULL"), nullable=True),
        sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("access_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
        _now("created_at"),
        _now("updated_at"),
        sa.CheckConstraint("speaker = 'user'", name="ck_facts_speaker_user"),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 1", name="ck_facts_confidence"),
        sa.CheckConstraint("salience >= 0 AND salience <= 1", name="ck_facts_salience"),
    )
    op.execute(
        "ALTER TABLE facts ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(to_tsvector('english', coalesce(text, ''))) STORED"
    )
    op.create_index("ix_facts_user_active", "facts", ["user_id"], postgresql_where=sa.text("superseded_at IS NULL"))
    op.create_index("ix_facts_user_key", "facts", ["user_id", "fact_key"])
    op.create_index("uq_facts_user_external", "facts", ["user_id", "external_id"], unique=True,
                    postgresql_where=sa.text("external_id IS NOT NULL"))
    op.execute("CREATE INDEX ix_facts_embedding ON facts USING hnsw (embedding vector_cosine_ops)")
    op.execute("CREATE INDEX ix_facts_search ON facts USING gin (search)")


def _episodes() -> None:
    op.create_table(
        "episodes",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("gist", sa.Text, nullable=False, server_default=""),
        sa.Column("summary", sa.Text, nullable=False, server_default=""),
        sa.Column("intent", sa.Text, nullable=True),
        sa.Column("emotion", sa.String(100), nullable=True),
        sa.Column("outcome", sa.Text, nullable=True),
        _salience(),
        sa.Column("open_loops", JSONB, nullable=False, server_default="[]"),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("exchange_ids", ARRAY(sa.BigInteger), nullable=False, server_default="{}"),
        sa.Column("embedding", Vector(DIM), nullable=True),
        sa.Column("embedding_model", sa.String(64), nullable=True),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("access_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
        _now("created_at"),
        sa.UniqueConstraint("user_id", "session_id", name="uq_episodes_user_session"),
        sa.CheckConstraint("salience >= 0 AND salience <= 1", name="ck_episodes_salience"),
    )
    op.execute(
        "ALTER TABLE episodes ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(to_tsvector('english', coalesce(title, '') || ' ' || coalesce(gist, '') || ' ' || coalesce(summary, ''))) "
        "STORED"
    )
    op.create_index("ix_episodes_user_id", "episodes", ["user_id"])
    op.execute("CREATE INDEX ix_episodes_embedding ON episodes USING hnsw (embedding vector_cosine_ops)")
    op.execute("CREATE INDEX ix_episodes_search ON episodes USING gin (search)")


def _exchange_access() -> None:
    # Access reinforcement for exchanges lives beside them: the exchanges table is the digest's.
    op.create_table(
        "exchange_access",
        sa.Column("exchange_id", sa.BigInteger, sa.ForeignKey("exchanges.id", ondelete="CASCADE"), primary_key=True),
        _user_fk(),
        sa.Column("access_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_exchange_access_user_id", "exchange_access", ["user_id"])


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_exchanges_user_time")
    op.execute("DROP INDEX IF EXISTS ix_exchanges_thread_time")
    op.drop_table("exchange_access")
    op.drop_table("episodes")
    op.drop_table("facts")
    op.drop_table("memory_chunks")
