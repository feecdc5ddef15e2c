"""Each person's vocabulary with a vector per word, for query expansion in recall.

A question often shares no word with the turn that answers it ("What martial arts has John
done?" ← "I'm doing kickboxing"). Recall expands the question with the nearest words of the
person's own vocabulary by embedding (services/memory/vocabulary.py): ``vocabulary`` holds each
word a person's turns use, its full-text lexeme and its MiniLM vector. The vector backfill job
fills it for the turns stored since ``vocabulary_mark.line_id`` (one row: the highest turn id whose
words are in), so a word is embedded once per person, in the background, never on the chat path.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "vocabulary",
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("word", sa.Text, primary_key=True),
        sa.Column("lexeme", sa.Text, nullable=False),
        sa.Column("embedding", Vector(384), nullable=False),
    )
    # The nearest words of one person: HNSW with pgvector's iterative scan (recall's search settings) keeps
    # the kNN a few index pages whatever the vocabulary's size (an exact scan of 3,600 words took ~8 ms).
    op.execute("CREATE INDEX ix_vocabulary_embedding ON vocabulary USING hnsw (embedding vector_cosine_ops)")
    op.create_table(
        "vocabulary_mark",
        sa.Column("id", sa.SmallInteger, primary_key=True),
        sa.Column("line_id", sa.BigInteger, nullable=False, server_default="0"),
        sa.CheckConstraint("id = 1", name="ck_vocabulary_mark_single"),
    )
    op.execute("INSERT INTO vocabulary_mark (id, line_id) VALUES (1, 0)")


def downgrade() -> None:
    op.drop_table("vocabulary_mark")
    op.drop_table("vocabulary")
