from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, new_id


class MessageFile(Base):
    """A picture sent with a user message, kept in the database so that every instance can serve it.

    Deleted with its message (a conversation delete) and with its owner (an account delete).
    """

    __tablename__ = "message_files"
    __table_args__ = (Index("ix_message_files_message", "message_id", "position"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    message_id: Mapped[str] = mapped_column(String(36), ForeignKey("messages.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    media_type: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
