from sqlalchemy import BigInteger, Boolean, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from memchat.models.base import Base


class Instance(Base):
    """A memchat process serving this database, seen at `seen_at_ms` (memchat.instances)."""

    __tablename__ = "instances"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    # whether it shares limits, resume and stop through Redis
    shared: Mapped[bool] = mapped_column(Boolean)
    started_at_ms: Mapped[int] = mapped_column(BigInteger)
    seen_at_ms: Mapped[int] = mapped_column(BigInteger)
