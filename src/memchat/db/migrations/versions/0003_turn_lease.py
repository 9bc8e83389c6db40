"""turn ownership: the instance answering a user message, and its lease

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03 12:10:00

A turn in progress is a user message with reply_state 'pending', the instance that answers it
(turn_owner) and the time its lease runs out (turn_lease_until_ms). Any instance that sees a live
lease answers a retry with 409; an expired lease is an interrupted turn.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("turn_owner", sa.String(length=64), nullable=True))
    op.add_column("messages", sa.Column("turn_lease_until_ms", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("turn_lease_until_ms")
        batch.drop_column("turn_owner")
