"""Memory validity: when a memory held, what replaced it, and the date of an event

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 14:20:00

`valid_from_ms`: when the user said it (the source message's time); `valid_to_ms` and
`superseded_by`: set when a later memory replaced it (a change of mind; the memory is archived,
not deleted); `event_date`: the day a dated life event happens (ISO date, the user's timezone),
resolved from 明天/下周三/月底... relative to when it was said. All NULL for v1 memories.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("memories") as batch:
        batch.add_column(sa.Column("valid_from_ms", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("valid_to_ms", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("superseded_by", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("event_date", sa.String(length=10), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memories") as batch:
        batch.drop_column("event_date")
        batch.drop_column("superseded_by")
        batch.drop_column("valid_to_ms")
        batch.drop_column("valid_from_ms")
