from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, new_id

DEFAULT_SLOT = "default"


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (
        # One default conversation per agent, enforced by the DB so that racing get-or-creates
        # converge on one row. Other conversations have slot NULL (NULLs are distinct).
        UniqueConstraint("agent_id", "slot", name="uq_conversations_agent_slot"),
        Index("ix_conversations_user_agent", "user_id", "agent_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(36), ForeignKey("agents.id", ondelete="CASCADE"))
    slot: Mapped[str | None] = mapped_column(String(20))
    # A name the user gave it (the console's conversation list); None: the console names it.
    title: Mapped[str | None] = mapped_column(Text, default=None)
    summary: Mapped[str | None] = mapped_column(Text)
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    last_message_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    updated_at_ms: Mapped[int] = mapped_column(BigInteger)
    # MEMCHAT_SUMMARY=llm: the last LLM summary and the seq of the last message it covers.
    llm_summary: Mapped[str | None] = mapped_column(Text, default=None)
    llm_summary_through_seq: Mapped[int | None] = mapped_column(BigInteger, default=None)

    @property
    def is_default(self) -> bool:
        return self.slot == DEFAULT_SLOT
