"""All SQL of users, and the reads of a whole account (its export, its size).

The account's other tables are written by their own repositories; here they are only read, and
deleted with the user by the database (every foreign key to users is ON DELETE CASCADE).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, bindparam, delete, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from memchat.clock import now_ms
from memchat.models import Agent, ApiKey, Conversation, Memory, MemoryEvent, Message, MessageFile, User

users = cast(Table, User.__table__)


async def get_user(session: AsyncSession, user_id: str) -> User | None:
    return await session.get(User, user_id)


async def get_user_by_email(session: AsyncSession, email: str) -> User | None:
    result = await session.execute(select(User).where(User.email == email))
    return result.scalar_one_or_none()


async def list_users(session: AsyncSession) -> Sequence[User]:
    result = await session.execute(select(User).order_by(User.created_at_ms, User.email))
    return result.scalars().all()


async def insert_user(session: AsyncSession, *, email: str, password_hash: str, display_name: str | None) -> User:
    user = User(email=email, password_hash=password_hash, display_name=display_name, created_at_ms=now_ms())
    session.add(user)
    await session.flush()
    return user


async def update_password_hash(
    session: AsyncSession, user_id: str, password_hash: str, *, tokens_valid_after_ms: int
) -> bool:
    """The new hash, and the time before which the user's tokens are refused. False when there is
    no such user (any more)."""
    result = await session.execute(
        update(User)
        .where(User.id == user_id)
        .values(password_hash=password_hash, tokens_valid_after_ms=tokens_valid_after_ms)
    )
    return (result.rowcount or 0) > 0  # type: ignore[attr-defined]


async def delete_user(session: AsyncSession, user_id: str) -> bool:
    """Deletes the user and, by the foreign keys' cascade, everything of theirs. False: no such user."""
    result = await session.execute(delete(User).where(User.id == user_id))
    return (result.rowcount or 0) > 0  # type: ignore[attr-defined]


@dataclass(frozen=True)
class AccountSize:
    agents: int
    conversations: int
    messages: int
    memories: int


async def account_size(session: AsyncSession, user_id: str) -> AccountSize:
    async def count(user_column: InstrumentedAttribute[str]) -> int:
        return await session.scalar(select(func.count()).where(user_column == user_id)) or 0

    return AccountSize(
        agents=await count(Agent.user_id),
        conversations=await count(Conversation.user_id),
        messages=await count(Message.user_id),
        memories=await count(Memory.user_id),
    )


@dataclass(frozen=True)
class AccountRows:
    agents: Sequence[Agent]
    conversations: Sequence[Conversation]
    messages: Sequence[Message]
    memories: Sequence[Memory]
    memory_events: Sequence[MemoryEvent]
    api_keys: Sequence[ApiKey]
    files: Sequence[MessageFile]


async def account_rows(session: AsyncSession, user_id: str) -> AccountRows:
    """Everything stored for the user, each table in the order it was written."""
    agents = await session.scalars(
        select(Agent).where(Agent.user_id == user_id).order_by(Agent.created_at_ms, Agent.id)
    )
    conversations = await session.scalars(
        select(Conversation)
        .where(Conversation.user_id == user_id)
        .order_by(Conversation.created_at_ms, Conversation.id)
    )
    messages = await session.scalars(select(Message).where(Message.user_id == user_id).order_by(Message.seq))
    memories = await session.scalars(
        select(Memory).where(Memory.user_id == user_id).order_by(Memory.created_at_ms, Memory.id)
    )
    events = await session.scalars(select(MemoryEvent).where(MemoryEvent.user_id == user_id).order_by(MemoryEvent.seq))
    api_keys = await session.scalars(
        select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at_ms, ApiKey.id)
    )
    files = await session.scalars(
        select(MessageFile).where(MessageFile.user_id == user_id).order_by(MessageFile.message_id, MessageFile.position)
    )
    return AccountRows(
        files=files.all(),
        agents=agents.all(),
        conversations=conversations.all(),
        messages=messages.all(),
        memories=memories.all(),
        memory_events=events.all(),
        api_keys=api_keys.all(),
    )


_USER_EXISTS = select(users.c.id).where(users.c.id == bindparam("user_id"))


def user_exists(conn: Connection, user_id: str) -> bool:
    """The chat turn's check, inside its own transaction (sync Connection)."""
    return conn.execute(_USER_EXISTS, {"user_id": user_id}).first() is not None


_USER_TOKENS = select(users.c.tokens_valid_after_ms).where(users.c.id == bindparam("user_id"))


def user_token_cutoff(conn: Connection, user_id: str) -> tuple[int | None] | None:
    """(tokens_valid_after_ms,) of the user, None when there is no such user: the chat turn's check
    of a login token, one primary-key read inside its own transaction."""
    row = conn.execute(_USER_TOKENS, {"user_id": user_id}).first()
    return None if row is None else (row.tokens_valid_after_ms,)
