"""Facts' and episodes' vectors kept in their rows; a person's turns rewritten in place version their counts.

Vectors. Facts' and episodes' vectors are kept in their rows (``STORAGE MAIN``), as migration 0012 did for exchanges.

An episode's row (title, gist, a summary of its session and a 1.5 kB vector) exceeds the 2 kB TOAST threshold,
so its vector was stored out of line: recall's episode arm, over a person's ~4,600 episodes at 100k exchanges
(one per session), read every vector through the TOAST index — 14,355 buffers and ~11 ms of PostgreSQL CPU a
recall, the planner pricing the scan as if the vectors were in the rows and choosing it over the HNSW index.
With the vectors inline it takes the index (1.2 ms). Facts are short and mostly inline already; a long one
moves in too. The rows stored before are written again here, so their vectors move in as well: only rows large
enough to have been stored out of line (over ~1,900 bytes whole; one per session for episodes, few facts), each
vector through its exact text form, so the same floats (an UPDATE that keeps a value keeps where it is stored).

Rewritten turns. Recall keeps a person's term counts between recalls, versioned by their ``exchange_line_counts``
row (services/memory/termcounts.py), which only inserts and deletes wrote: a turn rewritten in place (its text
edited, its speaker's vector filled, its thread position moved) may change the sample the counts come from, so
kept counts lived at most 60 s — and a person writing less than once a minute recounted at every recall (~6 ms
of PostgreSQL CPU). An UPDATE statement now counts in ``rewrites`` for each person whose turns it touched, which
versions the row too (one more row update per statement: the vector backfill's batch, a renumbered thread).

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
# Below TOAST's ~2,032-byte row threshold with a margin: a row this small was never stored out of line.
LARGE_ROW_BYTES = 1900


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN")
        op.execute(f"UPDATE {table} t SET embedding = CAST(CAST(t.embedding AS text) AS vector) "
                   f"WHERE t.embedding IS NOT NULL AND pg_column_size(t.*) > {LARGE_ROW_BYTES}")
    op.execute("ALTER TABLE exchange_line_counts ADD COLUMN rewrites bigint NOT NULL DEFAULT 0")
    op.execute("""
        CREATE FUNCTION exchange_line_counts_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE exchange_line_counts c SET rewrites = c.rewrites + 1
            FROM (SELECT DISTINCT user_id FROM changed) r WHERE c.user_id = r.user_id;
            RETURN NULL;
        END $$
    """)
    op.execute("CREATE TRIGGER exchange_line_counts_rewrite AFTER UPDATE ON exchange_lines "
               "REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION exchange_line_counts_rewrite()")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS exchange_line_counts_rewrite ON exchange_lines")
    op.execute("DROP FUNCTION IF EXISTS exchange_line_counts_rewrite()")
    op.execute("ALTER TABLE exchange_line_counts DROP COLUMN IF EXISTS rewrites")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
