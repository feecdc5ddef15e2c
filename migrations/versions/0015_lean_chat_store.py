"""A chat turn is stored lean: its lines and its vector follow with the memory chunker.

Storing a chat turn's exchange derived its two lines in a row trigger (two rows, their GIN
full-text entries, B-tree entries and the per-user line count) and entered the message's vector
in the HNSW index, on the reply's path; the chunker then replaced that vector with the turn's
(message and reply), a second HNSW entry. The digest now stores the exchange with
``embedding_model = 'deferred'`` and no vector: the trigger leaves such a row alone, and the
chunker job that follows every exchange (at low priority, after the reply) derives its lines and
stores its vector in one transaction (services/memory/vectors.py). A row whose chunker never ran
stays in the vector backfill's partial index (migration 0011: ``embedding IS NULL``), so the
backfill completes it the same way.

Downgrade derives the lines of any exchange still deferred and leaves its vector to the backfill.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-23
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

DEFERRED = "deferred"  # services.memory.vectors.DEFERRED (a migration does not import the app)
TRIGGER = ("CREATE TRIGGER exchange_lines_derive AFTER INSERT ON exchanges FOR EACH ROW {when}"
           "EXECUTE FUNCTION exchange_lines_derive()")
# Migration 0007's derivation, for the rows still deferred at a downgrade.
DERIVE_DEFERRED = f"""
    INSERT INTO exchange_lines (user_id, exchange_id, thread_id, position, speaker, text, external_id, occurred_at)
    SELECT e.user_id, e.id, e.thread_id, p.pos, p.speaker, p.body,
           CASE WHEN p.pos = (CASE WHEN coalesce(e.user_text, '') <> '' THEN 0 ELSE 1 END) THEN e.external_id END,
           coalesce(e.occurred_at, e.created_at) + p.pos * interval '1 millisecond'
    FROM exchanges e
    CROSS JOIN LATERAL (VALUES (0, 'user', e.user_text), (1, 'assistant', e.reply)) p(pos, speaker, body)
    WHERE e.embedding_model = '{DEFERRED}' AND coalesce(p.body, '') <> ''
      AND NOT EXISTS (SELECT 1 FROM exchange_lines l WHERE l.exchange_id = e.id)
    ORDER BY e.id, p.pos
"""


def upgrade() -> None:
    # A WHEN clause: the deferred row does not even call the PL/pgSQL function.
    op.execute("DROP TRIGGER IF EXISTS exchange_lines_derive ON exchanges")
    op.execute(TRIGGER.format(when=f"WHEN (NEW.embedding_model IS DISTINCT FROM '{DEFERRED}') "))


def downgrade() -> None:
    op.execute(DERIVE_DEFERRED)
    op.execute(f"UPDATE exchanges SET embedding_model = NULL WHERE embedding_model = '{DEFERRED}'")
    op.execute("DROP TRIGGER IF EXISTS exchange_lines_derive ON exchanges")
    op.execute(TRIGGER.format(when=""))
