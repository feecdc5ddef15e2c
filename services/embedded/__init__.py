"""Embedded PostgreSQL (pgvector) and Valkey, run from PyPI wheels when no URLs are configured."""
