from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, SeqInteger, new_id

# MemoryEvent.kind
EXTRACTED = "extracted"  # a new memory from a turn
CREATED = "created"  # a new memory the user wrote
MERGED = "merged"  # a candidate was the same memory as this one: content updated, importance = max
UPDATED = "updated"  # the LLM rewrote it (UPDATE)
ARCHIVED = "archived"  # retired (LLM ARCHIVE, or the user)
EDITED = "edited"  # the user changed it
REVERTED = "reverted"  # a former state restored
UNARCHIVED = "unarchived"  # the user took it back out of the archive (a restore, or an archive undone)
SUPERSEDED = "superseded"  # a change of mind: a newer memory replaced it (archived, valid_to, superseded_by)
EVENT_KINDS = (EXTRACTED, CREATED, MERGED, UPDATED, ARCHIVED, EDITED, REVERTED, UNARCHIVED, SUPERSEDED)

# MemoryEvent.actor
ACTOR_RULES = "rules"
ACTOR_EMBEDDINGS = "embeddings"
ACTOR_LLM = "llm"
ACTOR_USER = "user"
ACTORS = (ACTOR_RULES, ACTOR_EMBEDDINGS, ACTOR_LLM, ACTOR_USER)


class MemoryEvent(Base):
    """One change to a memory, with the memory's state before and after (None: it did not exist)."""

    __tablename__ = "memory_events"
    __table_args__ = (Index("ix_memory_events_memory_time", "memory_id", "created_at_ms"),)

    # Order of events: created_at_ms ties within a millisecond, seq does not.
    seq: Mapped[int] = mapped_column(SeqInteger, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True, default=new_id)
    memory_id: Mapped[str] = mapped_column(String(36), ForeignKey("memories.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(36), ForeignKey("agents.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(16))
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    source_message_id: Mapped[str | None] = mapped_column(String(36))
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
