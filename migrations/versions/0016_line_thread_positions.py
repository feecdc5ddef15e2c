"""Each line's position in its thread (``exchange_lines.thread_pos``), kept dense by triggers.

Recall reads the ``reach`` lines either side of each seed line in its thread. Without a position
that took two index probes per seed (the lines after it, the lines before it, each a LIMIT in time
order) and then a fetch of every line by id; with one, the seeds' overlapping ranges merge into
spans and each span is one index range read (services/memory/turns.py, ``window_rows``).

The position is the line's rank in its thread in (occurred_at, id) order, from 0, with no gaps,
whatever the store path (the importer's COPY, a live turn's derived lines, the memory chunker's
lines, a bundle, deletes and cascades), so every path is covered here and not in Python:
  * before each inserted row: one more than the line before it; a line older than lines already
    stored (an import into an existing thread, out of time order) moves the later ones up by one.
    A row trigger's query sees the rows its statement inserted before it, so a multi-row INSERT or
    COPY numbers its own lines too;
  * after a DELETE statement: each thread that lost lines is renumbered from its first lost line;
  * after an UPDATE of a line's user, thread or time (nothing does that today): both threads anew.
Writers of one thread serialise on a transaction-scoped advisory lock, so two transactions
appending to one thread (READ COMMITTED: the second sees the first's lines once it holds the lock)
never give two lines one position.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# The thread's writers' lock (the 16 keeps it apart from other hashtextextended lock keys).
LOCK = "PERFORM pg_advisory_xact_lock(hashtextextended({user} || chr(31) || {thread}, 16));"

RENUMBER = f"""
CREATE FUNCTION exchange_lines_renumber(p_user text, p_thread text, p_at timestamptz, p_id bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    {LOCK.format(user="p_user", thread="p_thread")}
    UPDATE exchange_lines l SET thread_pos = n.pos
    FROM (SELECT x.id, (coalesce((SELECT p.thread_pos FROM exchange_lines p
                                  WHERE p.user_id = p_user AND p.thread_id = p_thread
                                    AND (p.occurred_at, p.id) < (p_at, p_id)
                                  ORDER BY p.occurred_at DESC, p.id DESC LIMIT 1), -1)
                        + row_number() OVER (ORDER BY x.occurred_at, x.id))::int AS pos
          FROM exchange_lines x
          WHERE x.user_id = p_user AND x.thread_id = p_thread AND (x.occurred_at, x.id) >= (p_at, p_id)) n
    WHERE l.id = n.id AND l.thread_pos IS DISTINCT FROM n.pos;
END $$
"""

PLACE = f"""
CREATE FUNCTION exchange_lines_place() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    last record;
    before_pos integer;
BEGIN
    {LOCK.format(user="NEW.user_id", thread="NEW.thread_id")}
    -- Almost every line comes after all of its thread (a chat turn, an import in time order): one probe.
    SELECT occurred_at, id, thread_pos INTO last FROM exchange_lines
    WHERE user_id = NEW.user_id AND thread_id = NEW.thread_id ORDER BY occurred_at DESC, id DESC LIMIT 1;
    IF last.id IS NULL OR (last.occurred_at, last.id) < (NEW.occurred_at, NEW.id) THEN
        NEW.thread_pos := coalesce(last.thread_pos + 1, 0);
        RETURN NEW;
    END IF;
    SELECT thread_pos INTO before_pos FROM exchange_lines
    WHERE user_id = NEW.user_id AND thread_id = NEW.thread_id AND (occurred_at, id) < (NEW.occurred_at, NEW.id)
    ORDER BY occurred_at DESC, id DESC LIMIT 1;
    NEW.thread_pos := coalesce(before_pos, -1) + 1;
    UPDATE exchange_lines SET thread_pos = thread_pos + 1
    WHERE user_id = NEW.user_id AND thread_id = NEW.thread_id AND (occurred_at, id) > (NEW.occurred_at, NEW.id);
    RETURN NEW;
END $$
"""

CLOSE_GAPS = """
CREATE FUNCTION exchange_lines_close_gaps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM exchange_lines_renumber(f.user_id, f.thread_id, f.occurred_at, f.id)
    FROM (SELECT DISTINCT ON (user_id, thread_id) user_id, thread_id, occurred_at, id FROM removed
          ORDER BY user_id, thread_id, occurred_at, id) f;
    RETURN NULL;
END $$
"""

MOVED = """
CREATE FUNCTION exchange_lines_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM exchange_lines_renumber(OLD.user_id, OLD.thread_id, '-infinity', 0);
    PERFORM exchange_lines_renumber(NEW.user_id, NEW.thread_id, '-infinity', 0);
    RETURN NULL;
END $$
"""

TRIGGERS = (
    "CREATE TRIGGER exchange_lines_place BEFORE INSERT ON exchange_lines FOR EACH ROW "
    "EXECUTE FUNCTION exchange_lines_place()",
    "CREATE TRIGGER exchange_lines_close_gaps AFTER DELETE ON exchange_lines REFERENCING OLD TABLE AS removed "
    "FOR EACH STATEMENT EXECUTE FUNCTION exchange_lines_close_gaps()",
    "CREATE TRIGGER exchange_lines_moved AFTER UPDATE OF user_id, thread_id, occurred_at ON exchange_lines "
    "FOR EACH ROW WHEN ((OLD.user_id, OLD.thread_id, OLD.occurred_at) IS DISTINCT FROM "
    "(NEW.user_id, NEW.thread_id, NEW.occurred_at)) EXECUTE FUNCTION exchange_lines_moved()",
)
FUNCTIONS = ("exchange_lines_moved()", "exchange_lines_close_gaps()", "exchange_lines_place()",
             "exchange_lines_renumber(text, text, timestamptz, bigint)")


def upgrade() -> None:
    op.execute("ALTER TABLE exchange_lines ADD COLUMN thread_pos integer")
    op.execute("UPDATE exchange_lines l SET thread_pos = n.pos FROM (SELECT id, (row_number() OVER "
               "(PARTITION BY user_id, thread_id ORDER BY occurred_at, id) - 1)::int AS pos FROM exchange_lines) n "
               "WHERE n.id = l.id")
    op.execute("CREATE INDEX ix_exchange_lines_thread_pos ON exchange_lines (user_id, thread_id, thread_pos)")
    for sql in (RENUMBER, PLACE, CLOSE_GAPS, MOVED, *TRIGGERS):
        op.execute(sql)
    op.execute("ANALYZE exchange_lines")


def downgrade() -> None:
    for trigger in ("exchange_lines_moved", "exchange_lines_close_gaps", "exchange_lines_place"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger} ON exchange_lines")
    for function in FUNCTIONS:
        op.execute(f"DROP FUNCTION IF EXISTS {function}")
    op.execute("DROP INDEX IF EXISTS ix_exchange_lines_thread_pos")
    op.execute("ALTER TABLE exchange_lines DROP COLUMN IF EXISTS thread_pos")
