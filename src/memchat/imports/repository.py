"""The import's reads: which conversation holds an import, and how far its extraction is.

An import leaves no row of its own: its messages carry `client_message_id = import:{id}:{n}`
(the unique (conversation, client id) index keeps one import from landing twice in a conversation),
and its progress is their extraction state. Messages are written by conversations.messages."""

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.models import Agent, Conversation, Message
from memchat.models.message import EXTRACTION_PENDING


def client_id(import_id: str, index: int) -> str:
    return f"import:{import_id}:{index}"


async def lock_agent(session: AsyncSession, agent_id: str) -> None:
    """Two requests importing the same body at once: the second waits here, then finds the first's
    messages (PostgreSQL; SQLite has one writer anyway)."""
    await session.execute(select(Agent.id).where(Agent.id == agent_id).with_for_update(key_share=True))


async def conversation_of_import(session: AsyncSession, agent_id: str, import_id: str) -> str | None:
    result = await session.execute(
        select(Message.conversation_id)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(Conversation.agent_id == agent_id, Message.client_message_id == client_id(import_id, 0))
    )
    return result.scalars().first()


async def import_texts(session: AsyncSession, conversation_id: str, import_id: str) -> list[tuple[str, str]]:
    """(role, text) of the import's messages, in order: what a replay under the same key must match."""
    result = await session.execute(
        select(Message.role, Message.content)
        .where(Message.conversation_id == conversation_id, Message.client_message_id.like(f"import:{import_id}:%"))
        .order_by(Message.seq)
    )
    return [(role, content) for role, content in result.all()]


async def import_counts(session: AsyncSession, conversation_id: str, import_id: str) -> tuple[int, int, int]:
    """(messages, turns, turns still pending extraction) of one import."""
    prefix = f"import:{import_id}:%"
    result = await session.execute(
        select(
            func.count(),
            func.count().filter(Message.role == "assistant"),
            func.count().filter(Message.role == "assistant", Message.extraction_state == EXTRACTION_PENDING),
        ).where(Message.conversation_id == conversation_id, Message.client_message_id.like(prefix))
    )
    stored, turns, pending = result.one()
    return int(stored), int(turns), int(pending)


async def pending_turns(session: AsyncSession, conversation_id: str, import_id: str) -> list[str]:
    """The import's replies whose extraction has not run, oldest first."""
    result = await session.execute(
        select(Message.id)
        .where(
            Message.conversation_id == conversation_id,
            Message.client_message_id.like(f"import:{import_id}:%"),
            Message.role == "assistant",
            Message.extraction_state == EXTRACTION_PENDING,
        )
        .order_by(Message.seq)
    )
    return list(result.scalars().all())
