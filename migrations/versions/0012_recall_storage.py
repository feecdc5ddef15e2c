"""Recall's storage at scale: short GIN pending lists, and vectors kept in their rows.

GIN pending lists. With ``fastupdate`` (PostgreSQL's default) new rows' lexemes wait in an
unsorted pending list of up to ``gin_pending_list_limit`` (4 MB) that every search reads in full
before the index proper; the planner also counts its pages, so a common word's search looked
cheaper as a sequential scan. At 100k exchanges with ~8,600 lines pending, one lexeme's bitmap
scan took 10 ms instead of 0.3, and the BM25 arm of "Okay, Tuesday works." scanned 37,000 lines
in 37 ms where the index needed 2 (bench/recall_rounds.md, round four). A 256 kB limit keeps the list
to ~1,000 lines: importing 3,000 exchanges cost PostgreSQL ~0.2 s more CPU (the merge the
4 MB list defers to autovacuum) and stored 460–545 instead of 550–590 exchanges/s under load.

Vectors in their rows. An exchange's 1.5 kB vector made its row exceed the 2 kB TOAST threshold,
so every vector was stored out of line and each similarity recall computes (the ~500 exchanges
around its seeds, a month's ~4,000 exchanges for "what did I do last May?") read it through the
TOAST index: the month took 11.7 ms, 4.5 with the vectors inline. ``STORAGE MAIN`` keeps a vector
in its row unless the row cannot fit a page. It applies to rows written from now on (the vector
backfill writes every new vector); rows stored before keep theirs out of line until the table is
rewritten (``VACUUM FULL exchanges``: ~5 minutes at 100k exchanges on 2 loaded cores, most of it
rebuilding the HNSW index), which a migration cannot do inside its transaction.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23
"""

from alembic import op
from sqlalchemy import text

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# ix_exchanges_search only where 0010 did not drop it (databases built before that migration's final form).
GIN_INDEXES = ("ix_exchange_lines_search", "ix_facts_search", "ix_episodes_search", "ix_exchanges_search")
PENDING_LIMIT_KB = 256
VECTOR_COLUMNS = (("exchanges", "embedding"), ("exchange_lines", "embedding"))


def _existing(indexes: tuple[str, ...]) -> list[str]:
    bind = op.get_bind()
    return [index for index in indexes if bind.execute(text("SELECT to_regclass(:i)"), {"i": index}).scalar()]


def upgrade() -> None:
    for index in _existing(GIN_INDEXES):
        op.execute(f"ALTER INDEX {index} SET (gin_pending_list_limit = {PENDING_LIMIT_KB})")
        op.execute(f"SELECT gin_clean_pending_list('{index}'::regclass)")  # what waits now, merged once
    for table, column in VECTOR_COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE MAIN")


def downgrade() -> None:
    for table, column in VECTOR_COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTERNAL")
    for index in _existing(GIN_INDEXES):
        op.execute(f"ALTER INDEX {index} RESET (gin_pending_list_limit)")
