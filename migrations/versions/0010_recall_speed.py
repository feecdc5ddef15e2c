"""Recall and import speed: each user's number of exchange lines kept exact by statement triggers;
the exchanges' full-text index dropped.

BM25's IDF needs N, the number of the user's lines. Counting them took an index-only scan of
every line on each recall (~10–30 ms at 200k lines); the count is now one row per user, kept
by statement-level triggers on ``exchange_lines`` (one upsert per INSERT or COPY statement,
whatever its row count; deletes, including cascades from a deleted exchange or user, subtract).

Recall searches the words of single lines (``exchange_lines.search``, migration 0007); nothing
searches ``exchanges.search`` by its GIN index any more (a time window without a query vector
orders the window's rows by it, which needs no index), and keeping that index up to date was a
fifth of the time an import spends storing.

Revision ID: 0010
Revises: 0008
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "exchange_line_counts",
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("lines", sa.BigInteger, nullable=False, server_default="0"),
    )
    op.execute("""
        CREATE FUNCTION exchange_line_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO exchange_line_counts (user_id, lines)
            SELECT user_id, count(*) FROM added GROUP BY user_id ORDER BY user_id
            ON CONFLICT (user_id) DO UPDATE SET lines = exchange_line_counts.lines + excluded.lines;
            RETURN NULL;
        END $$
    """)
    op.execute("""
        CREATE FUNCTION exchange_line_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE exchange_line_counts c SET lines = greatest(c.lines - r.n, 0)
            FROM (SELECT user_id, count(*) AS n FROM removed GROUP BY user_id) r WHERE c.user_id = r.user_id;
            RETURN NULL;
        END $$
    """)
    op.execute("CREATE TRIGGER exchange_line_counts_add AFTER INSERT ON exchange_lines "
               "REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION exchange_line_counts_add()")
    op.execute("CREATE TRIGGER exchange_line_counts_remove AFTER DELETE ON exchange_lines "
               "REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION exchange_line_counts_remove()")
    op.execute("""
        CREATE FUNCTION exchange_line_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM exchange_line_counts;
            RETURN NULL;
        END $$
    """)
    op.execute("CREATE TRIGGER exchange_line_counts_clear AFTER TRUNCATE ON exchange_lines "
               "FOR EACH STATEMENT EXECUTE FUNCTION exchange_line_counts_clear()")
    op.execute("DROP INDEX IF EXISTS ix_exchanges_search")
    op.execute("INSERT INTO exchange_line_counts (user_id, lines) "
               "SELECT user_id, count(*) FROM exchange_lines GROUP BY user_id")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_exchanges_search ON exchanges USING gin (search)")
    op.execute("DROP TRIGGER IF EXISTS exchange_line_counts_clear ON exchange_lines")
    op.execute("DROP TRIGGER IF EXISTS exchange_line_counts_remove ON exchange_lines")
    op.execute("DROP TRIGGER IF EXISTS exchange_line_counts_add ON exchange_lines")
    op.execute("DROP FUNCTION IF EXISTS exchange_line_counts_remove()")
    op.execute("DROP FUNCTION IF EXISTS exchange_line_counts_add()")
    op.execute("DROP FUNCTION IF EXISTS exchange_line_counts_clear()")
    op.drop_table("exchange_line_counts")
