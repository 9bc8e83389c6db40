"""the rolling summary as it stood before each reply

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 03:15:00

Commit point 2 keeps, on the reply it stores, the conversation's summary as it was before that
reply was rolled in ("" for none). An edit or a regenerate that supersedes the reply puts that
summary back, so the replaced turns leave the summary as they leave history and prompts. Replies
stored before this revision have NULL: for them a digest summary forgets the replaced messages'
words instead (memchat.conversations.forget).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("summary_before", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("summary_before")
