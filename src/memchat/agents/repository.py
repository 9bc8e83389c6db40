"""All SQL of agents."""

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.models import Agent, Conversation
from memchat.models.conversation import DEFAULT_SLOT


def _with_last_message_at() -> Any:
    default_conversation = Conversation.__table__.alias("default_conversation")
    return (
        select(Agent, default_conversation.c.last_message_at_ms).outerjoin(
            default_conversation,
            (default_conversation.c.agent_id == Agent.id) & (default_conversation.c.slot == DEFAULT_SLOT),
        ),
        default_conversation,
    )


async def list_agents(session: AsyncSession, user_id: str) -> Sequence[tuple[Agent, int | None]]:
    query, conv = _with_last_message_at()
    result = await session.execute(
        query.where(Agent.user_id == user_id).order_by(
            conv.c.last_message_at_ms.desc().nulls_last(), Agent.created_at_ms.desc(), Agent.id
        )
    )
    return [(row[0], row[1]) for row in result.all()]


async def get_agent_with_activity(
    session: AsyncSession, user_id: str, agent_id: str
) -> tuple[Agent, int | None] | None:
    query, _conv = _with_last_message_at()
    row = (await session.execute(query.where(Agent.id == agent_id, Agent.user_id == user_id))).first()
    return None if row is None else (row[0], row[1])


async def get_agent(session: AsyncSession, user_id: str, agent_id: str) -> Agent | None:
    result = await session.execute(select(Agent).where(Agent.id == agent_id, Agent.user_id == user_id))
    return result.scalar_one_or_none()


async def insert_agent(session: AsyncSession, agent: Agent) -> Agent:
    session.add(agent)
    await session.flush()
    return agent


async def delete_agent(session: AsyncSession, agent: Agent) -> None:
    # Conversations, messages and memories go with it (ON DELETE CASCADE).
    await session.execute(delete(Agent).where(Agent.id == agent.id))


# the agent list's preview (`conversations.turn_writes` puts it in commit point 2's one statement on PostgreSQL)
SET_PREVIEW = (
    update(cast(Table, Agent.__table__))
    .where(Agent.__table__.c.id == bindparam("preview_agent_id"))  # not a column's name: it joins other updates
    .values(latest_message=bindparam("text"), latest_message_at_ms=bindparam("now"))
)


def set_latest_message(conn: Connection, *, agent_id: str, text: str, now_ms: int) -> None:
    """The agent list's preview of the latest reply (the chat turn's commit point 2, sync Connection)."""
    conn.execute(SET_PREVIEW, {"preview_agent_id": agent_id, "text": text, "now": now_ms})
