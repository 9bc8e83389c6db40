"""All SQL of API keys: this module owns the api_keys table (deleted with their user by ON DELETE CASCADE)."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.models import ApiKey, User


async def insert_key(
    session: AsyncSession, *, user_id: str, name: str, prefix: str, key_hash: str, now_ms: int
) -> ApiKey:
    key = ApiKey(user_id=user_id, name=name, prefix=prefix, key_hash=key_hash, created_at_ms=now_ms)
    session.add(key)
    await session.flush()
    return key


async def list_keys(session: AsyncSession, user_id: str) -> Sequence[ApiKey]:
    query = select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at_ms.desc(), ApiKey.id)
    return (await session.scalars(query)).all()


async def delete_key(session: AsyncSession, user_id: str, key_id: str) -> bool:
    """False when the user has no such key (another user's key included)."""
    result = await session.execute(delete(ApiKey).where(ApiKey.id == key_id, ApiKey.user_id == user_id))
    return (result.rowcount or 0) > 0  # type: ignore[attr-defined]


async def key_by_hash(session: AsyncSession, key_hash: str) -> Any:
    """The key's id, user id and last use, or None."""
    query = select(ApiKey.id, ApiKey.user_id, ApiKey.last_used_at_ms).where(ApiKey.key_hash == key_hash)
    return (await session.execute(query)).first()


async def user_and_key_by_hash(session: AsyncSession, key_hash: str) -> Any:
    """(User, key id, last use) for the key, or None."""
    query = (
        select(User, ApiKey.id, ApiKey.last_used_at_ms)
        .join(ApiKey, ApiKey.user_id == User.id)
        .where(ApiKey.key_hash == key_hash)
    )
    return (await session.execute(query)).first()


async def mark_used(session: AsyncSession, key_id: str, *, now_ms: int, stale_before_ms: int) -> None:
    """Sets the last use unless another request (on any instance) set it since `stale_before_ms`."""
    await session.execute(
        update(ApiKey)
        .where(
            ApiKey.id == key_id,
            or_(ApiKey.last_used_at_ms.is_(None), ApiKey.last_used_at_ms < stale_before_ms),
        )
        .values(last_used_at_ms=now_ms)
    )
