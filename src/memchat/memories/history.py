"""Memory history: every change to a memory is an event row with the memory's state before and after.

The callers own the transaction: an event commits with the change it describes, or not at all.
"""

from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.clock import now_ms
from memchat.errors import Conflict, InvalidInput, NotFound
from memchat.memories import repository
from memchat.memories.schemas import MemoryEventOut, MemoryHistory, MemoryOut
from memchat.models import Memory
from memchat.models.memory import ACTIVE, ARCHIVED
from memchat.models.memory_event import ACTOR_USER, REVERTED

SNAPSHOT_FIELDS = ("type", "content", "importance", "status")


def snapshot(memory: Memory) -> dict[str, Any]:
    """What a memory says: the fields a user sees and a revert restores."""
    return {name: getattr(memory, name) for name in SNAPSHOT_FIELDS}


async def record(
    session: AsyncSession,
    memory: Memory,
    *,
    kind: str,
    actor: str,
    before: dict[str, Any] | None,
    source_message_id: str | None = None,
    at_ms: int | None = None,
) -> None:
    """Write the event for a change already applied to `memory` (flushes it first)."""
    await session.flush()
    await repository.insert_event(
        session,
        memory=memory,
        kind=kind,
        actor=actor,
        before=before,
        after=snapshot(memory),
        source_message_id=source_message_id,
        now_ms=at_ms if at_ms is not None else now_ms(),
    )


def set_content(memory: Memory, content: str) -> None:
    """New content: a new hash, and the old vector no longer describes it."""
    if content != memory.content:
        memory.content = content
        memory.content_hash = repository.content_hash(content)
        memory.embedding = None
        memory.embedding_model = None


async def require_memory(session: AsyncSession, user_id: str, memory_id: str) -> Memory:
    memory = await repository.get_memory(session, user_id, memory_id)
    if memory is None:
        raise NotFound("memory not found", code="memory_not_found")
    return memory


async def require_room(session: AsyncSession, agent_id: str, cap: int) -> None:
    """422 when the agent already has `cap` active memories (adding or re-activating one)."""
    if not await repository.has_room(session, agent_id, cap):
        raise InvalidInput(f"this agent already has {cap} active memories", code="too_many_memories")


async def memory_history(session: AsyncSession, user_id: str, memory_id: str) -> MemoryHistory:
    memory = await require_memory(session, user_id, memory_id)
    events = await repository.list_events(session, memory.id)
    return MemoryHistory(events=[MemoryEventOut.model_validate(e) for e in events])


async def revert_memory(
    session: AsyncSession, max_memories: int, user_id: str, memory_id: str, event_id: str
) -> MemoryOut:
    """Restore the memory to its state before `event_id`; a memory that did not exist then is archived."""
    memory = await require_memory(session, user_id, memory_id)
    event = await repository.get_event(session, memory.id, event_id)
    if event is None:
        raise NotFound("event not found", code="memory_event_not_found")
    before = snapshot(memory)
    target = dict(event.before) if event.before is not None else {**before, "status": ARCHIVED}
    if target["status"] == ACTIVE and memory.status != ACTIVE:
        await require_room(session, memory.agent_id, max_memories)
    set_content(memory, str(target["content"]))
    memory.type = str(target["type"])
    memory.importance = int(target["importance"])
    memory.status = str(target["status"])
    if memory.status == ACTIVE:  # back in force: no longer ended or replaced
        memory.valid_to_ms = memory.superseded_by = None
    memory.updated_at_ms = now_ms()
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise Conflict(
            "another active memory already says this; archive or edit it first", code="duplicate_memory"
        ) from exc
    await record(session, memory, kind=REVERTED, actor=ACTOR_USER, before=before)
    return MemoryOut.model_validate(memory)
