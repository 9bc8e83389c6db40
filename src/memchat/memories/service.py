import logging

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.service import require_agent
from memchat.clock import now_ms
from memchat.errors import Conflict, InvalidInput, NotFound
from memchat.memories import repository
from memchat.memories.rules import MAX_CANDIDATES_PER_TURN, MemoryCandidate, extract_candidate_memories
from memchat.memories.schemas import MemoryCreate, MemoryOut, MemoryPatch
from memchat.models import Memory
from memchat.models.memory import ACTIVE
from memchat.settings import Settings
from memchat.text import normalize

log = logging.getLogger("memchat.memories")


async def list_memories(session: AsyncSession, user_id: str, agent_id: str, status: str | None) -> list[MemoryOut]:
    await require_agent(session, user_id, agent_id)
    rows = await repository.list_memories(session, user_id=user_id, agent_id=agent_id, status=status)
    return [MemoryOut.model_validate(m) for m in rows]


async def _require_memory(session: AsyncSession, user_id: str, memory_id: str) -> Memory:
    memory = await repository.get_memory(session, user_id, memory_id)
    if memory is None:
        raise NotFound("memory not found", code="memory_not_found")
    return memory


async def _check_capacity(session: AsyncSession, settings: Settings, agent_id: str) -> None:
    if await repository.count_active(session, agent_id) >= settings.max_memories_per_agent:
        raise InvalidInput(
            f"this agent already has {settings.max_memories_per_agent} active memories", code="too_many_memories"
        )


async def create_memory(
    session: AsyncSession, settings: Settings, user_id: str, agent_id: str, body: MemoryCreate
) -> MemoryOut:
    await require_agent(session, user_id, agent_id)
    content = normalize(body.content)
    if content is None:
        raise InvalidInput("content is empty", code="empty_content")
    await _check_capacity(session, settings, agent_id)
    memory_id = await repository.insert_if_new(
        session,
        user_id=user_id,
        agent_id=agent_id,
        type=body.type,
        content=content,
        importance=body.importance,
        source_message_id=None,
        now_ms=now_ms(),
    )
    if memory_id is None:
        raise Conflict("an active memory with this content already exists", code="duplicate_memory")
    return MemoryOut.model_validate(await _require_memory(session, user_id, memory_id))


async def update_memory(
    session: AsyncSession, settings: Settings, user_id: str, memory_id: str, body: MemoryPatch
) -> MemoryOut:
    memory = await _require_memory(session, user_id, memory_id)
    if body.content is not None:
        content = normalize(body.content)
        if content is None:
            raise InvalidInput("content is empty", code="empty_content")
        memory.content = content
        memory.content_hash = repository.content_hash(content)
    if body.type is not None:
        memory.type = body.type
    if body.importance is not None:
        memory.importance = body.importance
    if body.status is not None:
        if body.status == ACTIVE and memory.status != ACTIVE:
            await _check_capacity(session, settings, memory.agent_id)
        memory.status = body.status
    memory.updated_at_ms = now_ms()
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise Conflict("an active memory with this content already exists", code="duplicate_memory") from exc
    return MemoryOut.model_validate(memory)


async def delete_memory(session: AsyncSession, user_id: str, memory_id: str) -> None:
    await repository.delete_memory(session, (await _require_memory(session, user_id, memory_id)).id)


async def save_candidates(
    session: AsyncSession,
    settings: Settings,
    *,
    user_id: str,
    agent_id: str,
    candidates: list[MemoryCandidate],
    source_message_id: str | None,
) -> list[str]:
    """Insert up to two candidates, skipping exact duplicates of active memories; the new ids."""
    created: list[str] = []
    for candidate in candidates[:MAX_CANDIDATES_PER_TURN]:
        if await repository.count_active(session, agent_id) >= settings.max_memories_per_agent:
            log.warning("agent %s is at its memory cap; candidate dropped", agent_id)
            break
        memory_id = await repository.insert_if_new(
            session,
            user_id=user_id,
            agent_id=agent_id,
            type=candidate.type,
            content=candidate.content,
            importance=candidate.importance,
            source_message_id=source_message_id,
            now_ms=now_ms(),
        )
        if memory_id is not None:
            created.append(memory_id)
    return created


def rule_candidates(user_text: str | None) -> list[MemoryCandidate]:
    return extract_candidate_memories(user_text)
