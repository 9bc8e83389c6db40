from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base, new_id


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    display_name: Mapped[str | None] = mapped_column(String(200))
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    # bearer tokens issued before this are refused (set when the password changes)
    tokens_valid_after_ms: Mapped[int | None] = mapped_column(BigInteger)
