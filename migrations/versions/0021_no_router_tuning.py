"""The router's self-tuning loop goes: its five tables, the index it read decisions by, the decisions' feedback.

Triage calibration labelled each routing decision by the person's next message, routing reflection had the LLM
review sampled decisions into per-signal pressure, and the regulator turned that pressure into bounded weight
steps in ``configs/generated/router_weights.json``. Replayed as scheduled on the routing sets, every misroute
corrected by the person and an oracle as the reviewer (bench/RESULTS.md, 2026-11-29), it never moved a weight
on ordinary traffic (200 or 2,000 messages a day: the mean pressure stays under the regulator's bar), and fed
nothing but misroutes it gained 0 to 3 of the 370-1,500 messages it never saw, losing 4 of those it learned
from in one split. The explicit feedback a message gave the previous decision ("that's not what I asked") was
recorded for calibration only and goes with it. Routing decisions themselves stay; the router reads
``configs/router.toml`` only, so a leftover ``configs/generated/`` can be deleted.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

TABLES = ("regulator_steps", "routing_pressure", "routing_reviews", "triage_calibrations", "routing_followups")


def upgrade() -> None:
    for table in TABLES:
        op.drop_table(table)
    op.drop_index("ix_routing_decisions_created", table_name="routing_decisions")
    op.drop_column("routing_decisions", "feedback")


def _user_fk() -> sa.Column:
    return sa.Column("user_id", sa.String(200), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False)


def _decision_fk(**kwargs: object) -> sa.Column:
    return sa.Column("decision_id", sa.BigInteger, sa.ForeignKey("routing_decisions.id", ondelete="CASCADE"),
                     nullable=False, **kwargs)


def _at(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable,
                     server_default=None if nullable else sa.func.now())


def downgrade() -> None:
    op.add_column("routing_decisions", sa.Column("feedback", sa.String(32), nullable=True))
    op.create_index("ix_routing_decisions_created", "routing_decisions", ["created_at"])
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
