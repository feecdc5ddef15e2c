"""Cognition services: drift gists, routing follow-ups, reviews and pressure, regulator steps,
triage calibrations, autobiographies and skill profiles.

Per-person tables carry ``user_id`` with ON DELETE CASCADE from ``users`` (forget purges them);
rows written by a periodic service carry the ``fire_id`` of the fire that wrote them, unique
where a rerun of the same fire must find its earlier work instead of doing it again.

Revision ID: 0006
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _user_fk() -> sa.Column:
    return sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False)


def _decision_fk(**kwargs: object) -> sa.Column:
    return sa.Column("decision_id", sa.BigInteger, sa.ForeignKey("routing_decisions.id", ondelete="CASCADE"),
                     nullable=False, **kwargs)


def _at(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable,
                     server_default=None if nullable else sa.func.now())


def upgrade() -> None:
    # The services read "recent" decisions and "recently active" people by time.
    op.create_index("ix_routing_decisions_created", "routing_decisions", ["created_at"])
    op.create_index("ix_sessions_last_active", "sessions", ["last_active_at"])
    op.create_table(
        "drift_gists",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("fire_id", sa.String(200), nullable=False),
        sa.Column("topic", sa.String(200), nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False, server_default=""),
        sa.Column("relevance", sa.Float, nullable=False, server_default="0"),
        sa.Column("seeds", JSONB, nullable=False, server_default="[]"),
        sa.Column("associations", JSONB, nullable=False, server_default="[]"),
        sa.Column("sources", JSONB, nullable=False, server_default="[]"),
        # The newest memory this thought considered: later memories are what the next drift thinks about.
        _at("memory_until"),
        sa.Column("pushed_event_id", sa.String(64), nullable=True),
        _at("pushed_at", nullable=True),
        sa.Column("model", sa.String(200), nullable=True),
        _at("created_at"),
        sa.UniqueConstraint("user_id", "fire_id", name="uq_drift_gists_user_fire"),
    )
    op.create_index("ix_drift_gists_user_created", "drift_gists", ["user_id", "created_at"])
    op.create_table(
        "routing_followups",
        _decision_fk(primary_key=True),
        _user_fk(),
        sa.Column("label", sa.String(16), nullable=False),
        sa.Column("follow_request_id", sa.String(64), nullable=True),
        sa.Column("similarity", sa.Float, nullable=True),
        sa.Column("fire_id", sa.String(200), nullable=False),
        _at("created_at"),
        sa.CheckConstraint("label IN ('correction', 'rephrase', 'confirmation', 'continued', 'silent')",
                           name="ck_routing_followups_label"),
    )
    op.create_index("ix_routing_followups_user_id", "routing_followups", ["user_id"])
    op.create_table(
        "triage_calibrations",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("fire_id", sa.String(200), nullable=False, unique=True),
        _at("window_start"),
        _at("window_end"),
        sa.Column("decisions", sa.Integer, nullable=False, server_default="0"),
        sa.Column("misroutes", sa.Integer, nullable=False, server_default="0"),
        sa.Column("misroute_rate", sa.Float, nullable=True),
        sa.Column("by_label", JSONB, nullable=False, server_default="{}"),
        sa.Column("by_mode", JSONB, nullable=False, server_default="{}"),
        _at("created_at"),
    )
    op.create_table(
        "routing_reviews",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _decision_fk(unique=True),
        _user_fk(),
        sa.Column("fire_id", sa.String(200), nullable=False),
        sa.Column("chosen_mode", sa.String(16), nullable=False),
        sa.Column("fit", sa.Boolean, nullable=False),
        sa.Column("better_mode", sa.String(16), nullable=True),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("followup_label", sa.String(16), nullable=True),
        sa.Column("model", sa.String(200), nullable=True),
        _at("created_at"),
    )
    op.create_index("ix_routing_reviews_created", "routing_reviews", ["created_at"])
    op.create_table(
        "routing_pressure",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("review_id", sa.BigInteger, sa.ForeignKey("routing_reviews.id", ondelete="CASCADE"), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("signal", sa.String(64), nullable=False),
        sa.Column("pressure", sa.Float, nullable=False),
        _at("created_at"),
    )
    op.create_index("ix_routing_pressure_created", "routing_pressure", ["created_at"])
    op.create_index("ix_routing_pressure_review", "routing_pressure", ["review_id"])
    op.create_table(
        "regulator_steps",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("fire_id", sa.String(200), nullable=False, unique=True),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("signal", sa.String(64), nullable=False),
        sa.Column("old_weight", sa.Float, nullable=False),
        sa.Column("new_weight", sa.Float, nullable=False),
        sa.Column("pressure_before", sa.Float, nullable=False),
        sa.Column("reviews_before", sa.Integer, nullable=False),
        sa.Column("misroute_rate", sa.Float, nullable=True),
        sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("pressure_after", sa.Float, nullable=True),
        sa.Column("decided_fire_id", sa.String(200), nullable=True),
        _at("decided_at", nullable=True),
        _at("created_at"),
        sa.CheckConstraint("status IN ('pending', 'kept', 'reverted')", name="ck_regulator_steps_status"),
    )
    op.create_index("ix_regulator_steps_key", "regulator_steps", ["mode", "signal", "created_at"])
    op.create_table(
        "autobiographies",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("fire_id", sa.String(200), nullable=False),
        sa.Column("narrative", sa.Text, nullable=False),
        sa.Column("episode_ids", ARRAY(sa.BigInteger), nullable=False, server_default="{}"),
        _at("episodes_until"),
        sa.Column("model", sa.String(200), nullable=True),
        _at("created_at"),
        sa.UniqueConstraint("user_id", "fire_id", name="uq_autobiographies_user_fire"),
    )
    op.create_index("ix_autobiographies_user_created", "autobiographies", ["user_id", "created_at"])
    op.create_table(
        "skill_profiles",
        _user_fk(),
        sa.Column("skill", sa.String(64), nullable=False),
        sa.Column("uses", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        _at("last_used_at", nullable=True),
        sa.Column("details", JSONB, nullable=False, server_default="{}"),
        sa.Column("fire_id", sa.String(200), nullable=False),
        _at("updated_at"),
        sa.PrimaryKeyConstraint("user_id", "skill", name="pk_skill_profiles"),
    )


def downgrade() -> None:
    for table in ("skill_profiles", "autobiographies", "regulator_steps", "routing_pressure", "routing_reviews",
                  "triage_calibrations", "routing_followups", "drift_gists"):
        op.drop_table(table)
    op.drop_index("ix_sessions_last_active", table_name="sessions")
    op.drop_index("ix_routing_decisions_created", table_name="routing_decisions")
