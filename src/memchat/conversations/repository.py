"""All SQL of conversations and their messages."""

from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.chat import repository as chat_sql
from memchat.models import Conversation, Message
from memchat.models.conversation import DEFAULT_SLOT
from memchat.models.message import SUPERSEDED


async def get_default_conversation(session: AsyncSession, user_id: str, agent_id: str) -> Conversation | None:
    result = await session.execute(
        select(Conversation).where(
            Conversation.agent_id == agent_id, Conversation.user_id == user_id, Conversation.slot == DEFAULT_SLOT
        )
    )
    return result.scalar_one_or_none()


async def get_or_create_default_conversation(
    session: AsyncSession, *, user_id: str, agent_id: str, now_ms: int
) -> Conversation:
    existing = await get_default_conversation(session, user_id, agent_id)
    if existing is not None:
        return existing
    await session.run_sync(
        lambda sync: chat_sql.create_default_conversation(
            sync.connection(), user_id=user_id, agent_id=agent_id, now_ms=now_ms
        )
    )
    created = await get_default_conversation(session, user_id, agent_id)
    assert created is not None
    return created


async def get_conversation(session: AsyncSession, user_id: str, conversation_id: str) -> Conversation | None:
    result = await session.execute(
        select(Conversation).where(Conversation.id == conversation_id, Conversation.user_id == user_id)
    )
    return result.scalar_one_or_none()


async def history_page(
    session: AsyncSession, conversation_id: str, *, limit: int, before_seq: int | None, include_superseded: bool
) -> tuple[list[Message], bool]:
    query = select(Message).where(Message.conversation_id == conversation_id)
    if not include_superseded:
        query = query.where(Message.status != SUPERSEDED)
    if before_seq is not None:
        query = query.where(Message.seq < before_seq)
    rows = list((await session.execute(query.order_by(Message.seq.desc()).limit(limit + 1))).scalars().all())
    has_more = len(rows) > limit
    return list(reversed(rows[:limit])), has_more


async def get_message(session: AsyncSession, conversation_id: str, message_id: str) -> Message | None:
    result = await session.execute(
        select(Message).where(Message.conversation_id == conversation_id, Message.id == message_id)
    )
    return result.scalar_one_or_none()


async def get_message_by_id(session: AsyncSession, message_id: str) -> Message | None:
    result = await session.execute(select(Message).where(Message.id == message_id))
    return result.scalar_one_or_none()


async def set_message_fields(session: AsyncSession, message_id: str, **values: object) -> None:
    await session.execute(update(Message).where(Message.id == message_id).values(**values))


async def messages_in_state(session: AsyncSession, **where: str) -> Sequence[Message]:
    query = select(Message)
    for column, value in where.items():
        query = query.where(getattr(Message, column) == value)
    return (await session.execute(query.order_by(Message.seq))).scalars().all()


async def conversation_by_id(session: AsyncSession, conversation_id: str) -> Conversation | None:
    return await session.get(Conversation, conversation_id)


async def live_messages_after(
    session: AsyncSession, conversation_id: str, *, after_seq: int, limit: int
) -> list[Message]:
    """The newest `limit` live messages with seq > after_seq, oldest first."""
    query = select(Message).where(
        Message.conversation_id == conversation_id, Message.status != SUPERSEDED, Message.seq > after_seq
    )
    result = await session.execute(query.order_by(Message.seq.desc()).limit(limit))
    return list(reversed(result.scalars().all()))


async def last_live_seq(session: AsyncSession, conversation_id: str) -> int | None:
    result = await session.execute(
        select(func.max(Message.seq)).where(Message.conversation_id == conversation_id, Message.status != SUPERSEDED)
    )
    value = result.scalar_one_or_none()
    return int(value) if value is not None else None


async def store_llm_summary(
    session: AsyncSession,
    conversation_id: str,
    *,
    expected_through_seq: int | None,
    llm_summary: str,
    through_seq: int,
    set_summary: bool,
    now_ms: int,
) -> bool:
    """Store an LLM summary unless another one landed meanwhile (compare-and-set on through_seq)."""
    values: dict[str, object] = {"llm_summary": llm_summary, "llm_summary_through_seq": through_seq}
    if set_summary:
        values["summary"] = llm_summary
        values["updated_at_ms"] = now_ms
    through = Conversation.llm_summary_through_seq
    condition = through.is_(None) if expected_through_seq is None else through == expected_through_seq
    result = await session.execute(
        update(Conversation).where(Conversation.id == conversation_id, condition).values(**values)
    )
    return (result.rowcount or 0) > 0  # type: ignore[attr-defined]
