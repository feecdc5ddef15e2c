"""Exchange lines: every turn of an exchange as its own searchable row, with its external id.

An imported exchange joins several lines (one speaker's lines and the other's reply); recall
ranks single turns and returns the turn that answers with the turn it replies to, so each line
keeps its speaker, its text, its time and the external id it was imported with.

A trigger derives the lines of any exchange written without them (a live chat turn: the
person's message and the reply). The importer, which knows the real lines, inserts them itself
and tells the trigger so with ``SET LOCAL engram.own_lines = 'on'``. Existing exchanges are
backfilled the same way.

Revision ID: 0007
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import TSVECTOR

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# A role ("user", "assistant") is not a word of the conversation; a person's name is (speaker-aware search).
SEARCH_EXPR = ("to_tsvector('english', CASE WHEN lower(speaker) IN ('user', 'assistant') THEN '' "
               "ELSE speaker || ' ' END || text)")

DERIVED_LINES = """
    SELECT e.user_id, e.id, e.thread_id, p.pos, p.speaker, p.body,
           CASE WHEN p.pos = (CASE WHEN coalesce(e.user_text, '') <> '' THEN 0 ELSE 1 END) THEN e.external_id END,
           coalesce(e.occurred_at, e.created_at) + p.pos * interval '1 millisecond'
    FROM {source} CROSS JOIN LATERAL (VALUES (0, 'user', e.user_text), (1, 'assistant', e.reply)) p(pos, speaker, body)
    WHERE coalesce(p.body, '') <> ''
"""
COLUMNS = "(user_id, exchange_id, thread_id, position, speaker, text, external_id, occurred_at)"


def upgrade() -> None:
    op.create_table(
        "exchange_lines",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("exchange_id", sa.BigInteger, sa.ForeignKey("exchanges.id", ondelete="CASCADE"), nullable=False),
        sa.Column("thread_id", sa.String(200), nullable=False),
        sa.Column("position", sa.SmallInteger, nullable=False),
        sa.Column("speaker", sa.String(200), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("external_id", sa.String(200), nullable=True),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("search", TSVECTOR, sa.Computed(SEARCH_EXPR, persisted=True)),
    )
    op.create_index("ix_exchange_lines_exchange", "exchange_lines", ["exchange_id", "position"])
    # "The turn it replies to" is the previous line of the thread in time order.
    op.create_index("ix_exchange_lines_thread_time", "exchange_lines", ["user_id", "thread_id", "occurred_at", "id"])
    op.execute("CREATE INDEX ix_exchange_lines_search ON exchange_lines USING gin (search)")
    op.execute(f"""
        CREATE FUNCTION exchange_lines_derive() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF coalesce(current_setting('engram.own_lines', true), '') = 'on' THEN
                RETURN NULL;
            END IF;
            INSERT INTO exchange_lines {COLUMNS} {DERIVED_LINES.format(source="(SELECT NEW.*) e")};
            RETURN NULL;
        END $$
    """)
    op.execute("CREATE TRIGGER exchange_lines_derive AFTER INSERT ON exchanges FOR EACH ROW "
               "EXECUTE FUNCTION exchange_lines_derive()")
    op.execute(f"INSERT INTO exchange_lines {COLUMNS} {DERIVED_LINES.format(source='exchanges e')} "
               "ORDER BY e.id, p.pos")
    op.execute("ANALYZE exchange_lines")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS exchange_lines_derive ON exchanges")
    op.execute("DROP FUNCTION IF EXISTS exchange_lines_derive()")
    op.drop_table("exchange_lines")
