"""All SQL of conversations and their messages."""

from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.models import Conversation, Message
from memchat.models.base import new_id
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
    """Race-free: the unique (agent_id, slot) index decides, ON CONFLICT DO NOTHING loses quietly."""
    existing = await get_default_conversation(session, user_id, agent_id)
    if existing is not None:
        return existing
    values = {
        "id": new_id(),
        "user_id": user_id,
        "agent_id": agent_id,
        "slot": DEFAULT_SLOT,
        "summary": None,
        "message_count": 0,
        "last_message_at_ms": None,
        "created_at_ms": now_ms,
        "updated_at_ms": now_ms,
    }
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    await session.execute(
        insert(Conversation).values(**values).on_conflict_do_nothing(index_elements=["agent_id", "slot"])
    )
    created = await get_default_conversation(session, user_id, agent_id)
    assert created is not None  # inserted above or by the racing transaction that won
    return created


async def get_conversation(session: AsyncSession, user_id: str, conversation_id: str) -> Conversation | None:
    result = await session.execute(
        select(Conversation).where(Conversation.id == conversation_id, Conversation.user_id == user_id)
    )
    return result.scalar_one_or_none()


async def insert_message(session: AsyncSession, message: Message) -> Message:
    session.add(message)
    await session.flush()
    return message


async def bump_conversation(
    session: AsyncSession,
    conversation_id: str,
    *,
    count_delta: int,
    now_ms: int,
    summary: str | None = None,
    set_summary: bool = False,
) -> None:
    """The count moves in SQL (count = count + n), so concurrent turns cannot lose an increment."""
    values: dict[str, object] = {
        "message_count": Conversation.message_count + count_delta,
        "updated_at_ms": now_ms,
    }
    if count_delta > 0:
        values["last_message_at_ms"] = now_ms
    if set_summary:
        values["summary"] = summary
    await session.execute(update(Conversation).where(Conversation.id == conversation_id).values(**values))


async def recent_messages(
    session: AsyncSession, conversation_id: str, *, limit: int, before_seq: int | None = None
) -> list[Message]:
    """The newest `limit` stored messages (superseded left out), oldest first."""
    if limit <= 0:
        return []
    query = select(Message).where(Message.conversation_id == conversation_id, Message.status != SUPERSEDED)
    if before_seq is not None:
        query = query.where(Message.seq < before_seq)
    result = await session.execute(query.order_by(Message.seq.desc()).limit(limit))
    return list(reversed(result.scalars().all()))


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


async def find_by_client_id(session: AsyncSession, conversation_id: str, client_message_id: str) -> Message | None:
    result = await session.execute(
        select(Message).where(
            Message.conversation_id == conversation_id,
            Message.status != SUPERSEDED,
            (Message.client_message_id == client_message_id) | (Message.id == client_message_id),
        )
    )
    return result.scalars().first()


async def reply_to(session: AsyncSession, user_message_id: str) -> Message | None:
    """The current (not superseded) assistant reply to a user message."""
    result = await session.execute(
        select(Message)
        .where(Message.reply_to_id == user_message_id, Message.status != SUPERSEDED)
        .order_by(Message.seq.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def last_live_message(session: AsyncSession, conversation_id: str, role: str) -> Message | None:
    result = await session.execute(
        select(Message)
        .where(Message.conversation_id == conversation_id, Message.role == role, Message.status != SUPERSEDED)
        .order_by(Message.seq.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def supersede_from(session: AsyncSession, conversation_id: str, from_seq: int, now_ms: int) -> int:
    """Mark every live message at or after `from_seq` superseded; returns how many.

    Their client ids are released: the AI SDK keeps a message's id when the user edits it.
    """
    result = await session.execute(
        update(Message)
        .where(Message.conversation_id == conversation_id, Message.seq >= from_seq, Message.status != SUPERSEDED)
        .values(status=SUPERSEDED, client_message_id=None, updated_at_ms=now_ms)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


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
