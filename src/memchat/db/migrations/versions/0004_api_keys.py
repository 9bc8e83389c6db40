"""API keys, and a user's token cut-off

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03 14:10:00

An API key is stored as the SHA-256 of the key (keys are 32 random bytes, so a slow hash adds
nothing); `prefix` is the key's first characters, shown in lists so a user can tell keys apart.
`users.tokens_valid_after_ms`: bearer tokens issued before it are refused (set when the password
changes).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_used_at_ms", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_api_keys_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("api_keys") as batch:
        batch.create_index("ix_api_keys_user_created", ["user_id", "created_at_ms"], unique=False)
    op.add_column("users", sa.Column("tokens_valid_after_ms", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("tokens_valid_after_ms")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_index("ix_api_keys_user_created")
    op.drop_table("api_keys")
