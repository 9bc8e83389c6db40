"""a reasoning model's thinking, stored with its reply

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 12:40:00

Reasoning models stream their thinking (`delta.reasoning_content`) beside the reply's text. It is
kept with the assistant message, apart from `content`, so that history shows it while prompts,
summaries and memory extraction, which read `content`, never see it. NULL: no thinking.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("reasoning", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("reasoning")
