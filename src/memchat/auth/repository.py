"""All SQL of users."""

from typing import cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.clock import now_ms
from memchat.models import User

users = cast(Table, User.__table__)


async def get_user(session: AsyncSession, user_id: str) -> User | None:
    return await session.get(User, user_id)


async def get_user_by_email(session: AsyncSession, email: str) -> User | None:
    result = await session.execute(select(User).where(User.email == email))
    return result.scalar_one_or_none()


async def insert_user(session: AsyncSession, *, email: str, password_hash: str, display_name: str | None) -> User:
    user = User(email=email, password_hash=password_hash, display_name=display_name, created_at_ms=now_ms())
    session.add(user)
    await session.flush()
    return user


_USER_EXISTS = select(users.c.id).where(users.c.id == bindparam("user_id"))


def user_exists(conn: Connection, user_id: str) -> bool:
    """The chat turn's check, inside its own transaction (sync Connection)."""
    return conn.execute(_USER_EXISTS, {"user_id": user_id}).first() is not None
