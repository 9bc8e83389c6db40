"""A title for each conversation

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 14:30:00

The console lists an agent's conversations and lets the user rename them; NULL means no name
given (the console shows the start of the conversation instead).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("conversations", sa.Column("title", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("title")
