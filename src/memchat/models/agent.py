from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, new_id


class Agent(Base):
    __tablename__ = "agents"
    __table_args__ = (Index("ix_agents_user_created", "user_id", "created_at_ms"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Text)
    handle: Mapped[str] = mapped_column(Text, default="")
    default_prompt: Mapped[str | None] = mapped_column(Text)
    # The chat partner's profile: a column per field of memchat.schemas.ProfileFields.
    status: Mapped[str] = mapped_column(Text, default="")
    last_active: Mapped[str] = mapped_column(Text, default="")
    relationship: Mapped[str] = mapped_column(Text, default="")
    headline: Mapped[str] = mapped_column(Text, default="")
    topic: Mapped[str] = mapped_column(Text, default="")
    chemistry_label: Mapped[str] = mapped_column(Text, default="")
    chemistry: Mapped[str] = mapped_column(Text, default="")
    rhythm: Mapped[str] = mapped_column(Text, default="")
    profile_note: Mapped[str] = mapped_column(Text, default="")
    # The agent list's preview of the latest reply.
    latest_message: Mapped[str | None] = mapped_column(Text)
    latest_message_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    updated_at_ms: Mapped[int] = mapped_column(BigInteger)
