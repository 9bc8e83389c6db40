"""pictures sent with user messages

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 13:20:00

A user message may carry pictures (the AI SDK's file parts). Their bytes live in the database,
not on one instance's disk, so that every instance serves them and sends them upstream; they go
with their message and with their owner. `messages.picture_count` says how many a message has, so
that the prompt's history is read without another statement when none has any.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "message_files",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("message_id", sa.String(36), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("media_type", sa.String(64), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name="fk_message_files_message_id_messages", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_message_files_user_id_users", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_message_files"),
    )
    op.create_index("ix_message_files_message", "message_files", ["message_id", "position"])
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("picture_count", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("picture_count")
    op.drop_index("ix_message_files_message", table_name="message_files")
    op.drop_table("message_files")
