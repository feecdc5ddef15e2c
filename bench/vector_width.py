"""A throwaway bench database's vector columns set to another model's width (768 for mpnet).

The migrations fix every vector column at 384 (MiniLM's width). To measure a wider model through
the real pipeline, a bench that owns a fresh database retypes every ``vector(384)`` column there
before anything is stored, dropping the indexes on them first and creating them again after. The
Python side binds vectors without checking their width, so nothing else changes. Never for a
database that holds data: vectors of different widths cannot be compared.
"""

from __future__ import annotations

from sqlalchemy import Engine, text

VECTOR_COLUMNS = """
SELECT c.relname AS tbl, a.attname AS col, a.atttypmod AS width
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE a.atttypid = 'vector'::regtype AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind = 'r'
  AND n.nspname = current_schema()
"""
INDEXES_ON = """
SELECT DISTINCT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE a.atttypid = 'vector'::regtype
"""


def set_vector_width(engine: Engine, dim: int) -> list[str]:
    """Retype every vector column of the current schema to ``vector(dim)``; returns the columns changed
    (none when a kept bench database already has that width)."""
    with engine.begin() as connection:
        columns = [(row.tbl, row.col) for row in connection.execute(text(VECTOR_COLUMNS)) if row.width != dim]
        if not columns:
            return []
        for table, column in columns:
            if connection.scalar(text(f'SELECT EXISTS (SELECT 1 FROM "{table}" WHERE "{column}" IS NOT NULL)')):
                raise RuntimeError(f"set_vector_width: {table}.{column} already holds vectors")
        indexes = list(connection.execute(text(INDEXES_ON)))
        for index in indexes:
            connection.execute(text(f"DROP INDEX {index.name}"))
        for table, column in columns:
            connection.execute(text(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE vector({dim})'))
        for index in indexes:
            connection.execute(text(index.definition))
    return [f"{table}.{column}" for table, column in columns]
