from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.clock import now_ms
from memchat.models import User


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
