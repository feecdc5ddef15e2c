"""Facts' and episodes' vectors kept in their rows (``STORAGE MAIN``), as migration 0012 did for exchanges.

An episode's row (title, gist, a summary of its session and a 1.5 kB vector) exceeds the 2 kB TOAST threshold,
so its vector was stored out of line: recall's episode arm, over a person's ~4,600 episodes at 100k exchanges
(one per session), read every vector through the TOAST index — 14,355 buffers and ~11 ms of PostgreSQL CPU a
recall, the planner pricing the scan as if the vectors were in the rows and choosing it over the HNSW index.
With the vectors inline it takes the index (1.2 ms). Facts are short and mostly inline already; a long one
moves in too. It applies to rows written from now on; rows stored before keep their vectors out of line until
the table is rewritten (``VACUUM FULL episodes``: seconds at 4,600 rows), which a migration cannot do inside its
transaction (``bench.recall --rewrite`` does it for the bench's database; bench/recall_live.py, rlive).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

TABLES = ("facts", "episodes")


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
