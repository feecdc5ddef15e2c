"""The vocabulary's HNSW index dropped: nothing searches by it, and it cost more than the table.

Recall's query expansion finds a person's nearest words exactly (``vocabulary.nearest_sql`` orders by a column of
a subquery no index can serve, and ``vocabmatrix`` keeps the vectors in the process): the index of migration 0013
was kept up to date by every word the backfill adds, for no reader. With a thousand people on one database
(bench/tenants.py, 50 people and 50k exchanges) it was 62 MiB beside a 56 MiB table, and each insert walked its
graph of everyone's words.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_vocabulary_embedding")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_vocabulary_embedding ON vocabulary "
               "USING hnsw (embedding vector_cosine_ops)")
