from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, new_id

ACTIVE = "active"
ARCHIVED = "archived"


class Memory(Base):
    __tablename__ = "memories"
    __table_args__ = (
        # Exact-content dedupe of active memories, by hash so long texts index on every DB.
        Index(
            "uq_memories_agent_active_content",
            "agent_id",
            "content_hash",
            unique=True,
            sqlite_where=text("status = 'active'"),
            postgresql_where=text("status = 'active'"),
        ),
        Index("ix_memories_agent_rank", "agent_id", "status", "importance", "updated_at_ms"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(36), ForeignKey("agents.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(32))
    content: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    importance: Mapped[int] = mapped_column(Integer)
    source_message_id: Mapped[str | None] = mapped_column(String(36))
    status: Mapped[str] = mapped_column(String(16), default=ACTIVE)
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    updated_at_ms: Mapped[int] = mapped_column(BigInteger)
    # memory v2: the content's passage vector (little-endian float32) and the model that made it;
    # NULL until an embedder is configured, and again whenever the content changes.
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    embedding_model: Mapped[str | None] = mapped_column(String(200), default=None)
    # memory validity (v2 extractors): when it was said, when and by what a change of mind replaced
    # it (it is archived then, not deleted), and the day of a dated event (ISO date, user's timezone)
    valid_from_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    valid_to_ms: Mapped[int | None] = mapped_column(BigInteger, default=None)
    superseded_by: Mapped[str | None] = mapped_column(String(36), default=None)
    event_date: Mapped[str | None] = mapped_column(String(10), default=None)
