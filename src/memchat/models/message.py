from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, SeqInteger, new_id

# Message.status
COMPLETED = "completed"  # user message stored; assistant reply finished upstream
INCOMPLETE = "incomplete"  # assistant reply cut short (upstream failure, deadline, size cap, crash)
STOPPED = "stopped"  # assistant reply stopped by the user (POST /api/chat/{chatId}/stop): what they saw
SUPERSEDED = "superseded"  # replaced by a regenerate or an edit; out of history, prompts, counts

# Message.reply_state (user messages): where the turn it opened stands
REPLY_PENDING = "pending"
REPLY_DONE = "done"
REPLY_FAILED = "failed"  # upstream failed before any text
REPLY_INTERRUPTED = "interrupted"  # the server stopped mid-turn

# Message.extraction_state (assistant messages): memory extraction for the turn
EXTRACTION_PENDING = "pending"
EXTRACTION_DONE = "done"


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "client_message_id", name="uq_messages_conversation_client_id"),
        Index("ix_messages_conversation_seq", "conversation_id", "seq"),
        Index("ix_messages_reply_state", "reply_state"),
        Index("ix_messages_extraction_state", "extraction_state"),
    )

    # Insertion order: created_at_ms can tie within a millisecond, seq cannot.
    seq: Mapped[int] = mapped_column(SeqInteger, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(String(36), ForeignKey("conversations.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(36), ForeignKey("agents.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default=COMPLETED)
    client_message_id: Mapped[str | None] = mapped_column(String(200))
    reply_to_id: Mapped[str | None] = mapped_column(String(36))
    reply_state: Mapped[str | None] = mapped_column(String(16))
    extraction_state: Mapped[str | None] = mapped_column(String(16))
    # A turn in progress (reply_state pending): the instance answering it and when its lease ends.
    turn_owner: Mapped[str | None] = mapped_column(String(64))
    turn_lease_until_ms: Mapped[int | None] = mapped_column(BigInteger)
    # a reply: the conversation's summary before this reply was rolled in ("" none; NULL: not kept)
    summary_before: Mapped[str | None] = mapped_column(Text, default=None)
    # a reasoning model's thinking (assistant messages): shown in history, never in a prompt
    reasoning: Mapped[str | None] = mapped_column(Text, default=None)
    # a user message: how many pictures were sent with it (message_files), read with the history
    picture_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    updated_at_ms: Mapped[int] = mapped_column(BigInteger)
