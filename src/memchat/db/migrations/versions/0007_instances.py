"""the memchat processes serving this database

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 14:35:00

Each process on PostgreSQL registers itself and refreshes `seen_at_ms` while it runs: a second
instance without Redis (or beside one without Redis) refuses to start, since limits, resume and
stop would silently be per process (memchat.instances).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "instances",
        sa.Column("id", sa.String(length=100), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("started_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("seen_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instances")),
    )


def downgrade() -> None:
    op.drop_table("instances")
