"""All SQL of long-term memories and their history: this module owns both tables.

The chat turn's reads are statements on a sync Connection built once (memchat.db.engine explains
why); everything else is async.
"""

import hashlib
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, select, text, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.db.engine import dialect_insert
from memchat.memories.types import StoredMemory
from memchat.models import Agent, Memory, MemoryEvent
from memchat.models.base import new_id
from memchat.models.memory import ACTIVE

memories = cast(Table, Memory.__table__)
_events = cast(Table, MemoryEvent.__table__)

# --- the chat turn's reads (sync Connection, inside Database.run_write) ---

_MEMORY_COLUMNS = (
    memories.c.id,
    memories.c.type,
    memories.c.content,
    memories.c.importance,
    memories.c.updated_at_ms,
    memories.c.event_date,
    memories.c.valid_from_ms,
)
_MEMORY_ORDER = (memories.c.importance.desc(), memories.c.updated_at_ms.desc(), memories.c.id)
_MEMORIES_FOR_PROMPT = (
    select(*_MEMORY_COLUMNS)
    .where(memories.c.agent_id == bindparam("agent_id"), memories.c.status == ACTIVE)
    .order_by(*_MEMORY_ORDER)
    .limit(bindparam("limit"))
)
_ALL_ACTIVE_WITH_VECTORS = (
    select(*_MEMORY_COLUMNS, memories.c.embedding, memories.c.embedding_model)
    .where(memories.c.agent_id == bindparam("agent_id"), memories.c.status == ACTIVE)
    .order_by(*_MEMORY_ORDER)
)


def memories_for_prompt(conn: Connection, agent_id: str, *, limit: int) -> list[StoredMemory]:
    """docs/behaviour.md step 6: active memories, importance desc, updated_at_ms desc, the first `limit`."""
    rows = conn.execute(_MEMORIES_FOR_PROMPT, {"agent_id": agent_id, "limit": limit})
    return [
        StoredMemory(
            r.id,
            r.type,
            r.content,
            r.importance,
            r.updated_at_ms,
            event_date=r.event_date,
            valid_from_ms=r.valid_from_ms,
        )
        for r in rows
    ]


def active_memories_with_vectors(conn: Connection, agent_id: str) -> list[StoredMemory]:
    """Every active memory of the agent with its vector, in the v1 order (ranked recall picks from them)."""
    rows = conn.execute(_ALL_ACTIVE_WITH_VECTORS, {"agent_id": agent_id})
    return [
        StoredMemory(
            r.id,
            r.type,
            r.content,
            r.importance,
            r.updated_at_ms,
            r.embedding,
            r.embedding_model,
            event_date=r.event_date,
            valid_from_ms=r.valid_from_ms,
        )
        for r in rows
    ]


_ACTIVE_CONTENTS = select(memories.c.content).where(
    memories.c.agent_id == bindparam("agent_id"), memories.c.status == ACTIVE
)
_EVENTS_SINCE = (
    select(_events.c.before, _events.c.after)
    .select_from(memories.join(_events, _events.c.memory_id == memories.c.id))
    .where(memories.c.agent_id == bindparam("agent_id"), _events.c.created_at_ms >= bindparam("since_ms"))
    .order_by(_events.c.seq)
)


def active_contents(conn: Connection, agent_id: str) -> list[str]:
    """What the agent's active memories say."""
    return list(conn.execute(_ACTIVE_CONTENTS, {"agent_id": agent_id}).scalars())


def said_before_leaving(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str | None:
    """What an active memory said, when an event ended it: archived, superseded, or its words changed."""
    if not before or before.get("status") != ACTIVE:
        return None
    if after is not None and after.get("status") == ACTIVE and after.get("content") == before.get("content"):
        return None
    return str(before["content"])


def left_since(conn: Connection, agent_id: str, since_ms: int) -> list[str]:
    """What the agent's memories said that stopped holding at or after `since_ms`, as their events
    recorded it (a deleted memory's events went with it)."""
    rows = conn.execute(_EVENTS_SINCE, {"agent_id": agent_id, "since_ms": since_ms})
    left = (said_before_leaving(r.before, r.after) for r in rows)
    return list(dict.fromkeys(s for s in left if s))


# --- async: REST routes and background jobs ---


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


async def list_memories(
    session: AsyncSession, *, user_id: str, agent_id: str, status: str | None, limit: int | None = None
) -> Sequence[Memory]:
    """The v1 order (docs/behaviour.md): importance desc, updated_at_ms desc."""
    query = select(Memory).where(Memory.user_id == user_id, Memory.agent_id == agent_id)
    if status is not None:
        query = query.where(Memory.status == status)
    query = query.order_by(Memory.importance.desc(), Memory.updated_at_ms.desc(), Memory.id)
    if limit is not None:
        query = query.limit(limit)
    return (await session.execute(query)).scalars().all()


async def has_room(session: AsyncSession, agent_id: str, cap: int) -> bool:
    """Whether the agent has fewer than `cap` active memories. Locks the agent's row until the
    transaction ends (PostgreSQL; SQLite has one writer anyway), so that concurrent additions
    count one after the other and the cap holds."""
    await session.execute(select(Agent.id).where(Agent.id == agent_id).with_for_update(key_share=True))
    result = await session.execute(select(func.count()).where(Memory.agent_id == agent_id, Memory.status == ACTIVE))
    return int(result.scalar_one()) < cap


async def get_memory(session: AsyncSession, user_id: str, memory_id: str) -> Memory | None:
    result = await session.execute(select(Memory).where(Memory.id == memory_id, Memory.user_id == user_id))
    return result.scalar_one_or_none()


async def insert_if_new(
    session: AsyncSession,
    *,
    user_id: str,
    agent_id: str,
    type: str,
    content: str,
    importance: int,
    source_message_id: str | None,
    now_ms: int,
    embedding: bytes | None = None,
    embedding_model: str | None = None,
    valid_from_ms: int | None = None,
    event_date: str | None = None,
) -> str | None:
    """Insert unless an active memory of this agent has the same content; the id, or None if skipped.

    The partial unique index decides, so two extractions racing on one text keep one row.
    """
    memory_id = new_id()
    values = {
        "id": memory_id,
        "user_id": user_id,
        "agent_id": agent_id,
        "type": type,
        "content": content,
        "content_hash": content_hash(content),
        "importance": importance,
        "source_message_id": source_message_id,
        "status": ACTIVE,
        "created_at_ms": now_ms,
        "updated_at_ms": now_ms,
        "embedding": embedding,
        "embedding_model": embedding_model if embedding is not None else None,
        "valid_from_ms": valid_from_ms,
        "event_date": event_date,
    }
    statement = (
        dialect_insert(session.get_bind().dialect.name)(Memory)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["agent_id", "content_hash"], index_where=text("status = 'active'"))
    )
    result = await session.execute(statement)
    return memory_id if (result.rowcount or 0) > 0 else None  # type: ignore[attr-defined]


async def delete_memory(session: AsyncSession, memory_id: str) -> None:
    await session.execute(delete(Memory).where(Memory.id == memory_id))


async def active_memories(session: AsyncSession, agent_id: str) -> list[StoredMemory]:
    """All active memories of an agent with their vectors, in the v1 order."""
    return await session.run_sync(lambda sync: active_memories_with_vectors(sync.connection(), agent_id))


async def get_memory_of_agent(session: AsyncSession, agent_id: str, memory_id: str) -> Memory | None:
    result = await session.execute(select(Memory).where(Memory.id == memory_id, Memory.agent_id == agent_id))
    return result.scalar_one_or_none()


async def set_embedding(session: AsyncSession, memory_id: str, content: str, embedding: bytes, model: str) -> None:
    """Store a vector only if the content it was computed from is still the memory's content."""
    await session.execute(
        update(Memory)
        .where(Memory.id == memory_id, Memory.content_hash == content_hash(content))
        .values(embedding=embedding, embedding_model=model)
    )


async def insert_event(
    session: AsyncSession,
    *,
    memory: Memory,
    kind: str,
    actor: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    source_message_id: str | None,
    now_ms: int,
) -> MemoryEvent:
    event = MemoryEvent(
        memory_id=memory.id,
        user_id=memory.user_id,
        agent_id=memory.agent_id,
        kind=kind,
        actor=actor,
        before=before,
        after=after,
        source_message_id=source_message_id,
        created_at_ms=now_ms,
    )
    session.add(event)
    await session.flush()
    return event


async def list_events(session: AsyncSession, memory_id: str) -> Sequence[MemoryEvent]:
    """A memory's history, oldest first."""
    query = select(MemoryEvent).where(MemoryEvent.memory_id == memory_id)
    return (await session.execute(query.order_by(MemoryEvent.created_at_ms, MemoryEvent.seq))).scalars().all()


async def get_event(session: AsyncSession, memory_id: str, event_id: str) -> MemoryEvent | None:
    result = await session.execute(
        select(MemoryEvent).where(MemoryEvent.id == event_id, MemoryEvent.memory_id == memory_id)
    )
    return result.scalar_one_or_none()
