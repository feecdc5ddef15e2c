"""Periodic services: one row per service run, and the claim columns that make reminders fire once.

``service_runs`` records every fire of a service (scheduled or manual) once: ``(service, fire_id)``
is unique, so a second scheduler, a retried job or a manual re-run of the same fire finds the
row and changes nothing. ``scheduled_items`` gains a claim (token + time) and the stored reply of
a scheduled prompt, which together let the firing service deliver each occurrence exactly once
(see ``services/periodic/reminders.py``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_runs",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("service", sa.String(100), nullable=False),
        sa.Column("fire_id", sa.String(200), nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False, server_default="schedule"),
        sa.Column("outcome", sa.String(16), nullable=False, server_default="running"),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("details", JSONB, nullable=False, server_default="{}"),
        sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration_ms", sa.Integer, nullable=True),
        sa.UniqueConstraint("service", "fire_id", name="uq_service_runs_fire"),
        sa.CheckConstraint("outcome IN ('running', 'ran', 'skipped', 'failed')", name="ck_service_runs_outcome"),
    )
    # `engram services` and /ops/services: the latest run of each service.
    op.create_index("ix_service_runs_latest", "service_runs", ["service", sa.text("started_at DESC")])
    op.add_column("scheduled_items", sa.Column("fire_token", sa.String(64), nullable=True))
    op.add_column("scheduled_items", sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("scheduled_items", sa.Column("pending_reply", sa.Text, nullable=True))
    op.add_column("scheduled_items", sa.Column("fire_count", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("scheduled_items", "fire_count")
    op.drop_column("scheduled_items", "pending_reply")
    op.drop_column("scheduled_items", "claimed_at")
    op.drop_column("scheduled_items", "fire_token")
    op.drop_index("ix_service_runs_latest", table_name="service_runs")
    op.drop_table("service_runs")
