from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, new_id


class ApiKey(Base):
    """A long-lived bearer credential: only the SHA-256 of the key is stored (see migration 0004)."""

    __tablename__ = "api_keys"
    __table_args__ = (Index("ix_api_keys_user_created", "user_id", "created_at_ms"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Text)
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    last_used_at_ms: Mapped[int | None] = mapped_column(BigInteger)
