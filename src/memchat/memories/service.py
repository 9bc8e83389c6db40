from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.service import require_agent
from memchat.clock import now_ms
from memchat.conversations.repository import forget_in_summaries
from memchat.errors import Conflict, InvalidInput
from memchat.memories import history, repository
from memchat.memories.extraction.apply import apply_plan
from memchat.memories.extraction.planning import ExtractionPlan
from memchat.memories.language.rules import MAX_CANDIDATES_PER_TURN
from memchat.memories.schemas import MemoryCreate, MemoryOut, MemoryPatch
from memchat.memories.types import MemoryDraft
from memchat.models.memory import ACTIVE, ARCHIVED
from memchat.models.memory_event import ACTOR_RULES, ACTOR_USER, CREATED, EDITED, UNARCHIVED
from memchat.models.memory_event import ARCHIVED as EVENT_ARCHIVED
from memchat.text import normalize


async def list_memories(session: AsyncSession, user_id: str, agent_id: str, status: str | None) -> list[MemoryOut]:
    await require_agent(session, user_id, agent_id)
    rows = await repository.list_memories(session, user_id=user_id, agent_id=agent_id, status=status)
    return [MemoryOut.model_validate(m) for m in rows]


_require_memory = history.require_memory


async def create_memory(
    session: AsyncSession, max_memories: int, user_id: str, agent_id: str, body: MemoryCreate
) -> MemoryOut:
    await require_agent(session, user_id, agent_id)
    content = normalize(body.content)
    if content is None:
        raise InvalidInput("content is empty", code="empty_content")
    await history.require_room(session, agent_id, max_memories)
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
    memory = await _require_memory(session, user_id, memory_id)
    await history.record(session, memory, kind=CREATED, actor=ACTOR_USER, before=None)
    return MemoryOut.model_validate(memory)


async def update_memory(
    session: AsyncSession, max_memories: int, user_id: str, memory_id: str, body: MemoryPatch
) -> MemoryOut:
    memory = await _require_memory(session, user_id, memory_id)
    before = history.snapshot(memory)
    said = memory.content
    if body.content is not None:
        content = normalize(body.content)
        if content is None:
            raise InvalidInput("content is empty", code="empty_content")
        history.set_content(memory, content)
    if body.type is not None:
        memory.type = body.type
    if body.importance is not None:
        memory.importance = body.importance
    if body.status is not None:
        if body.status == ACTIVE and memory.status != ACTIVE:
            await history.require_room(session, memory.agent_id, max_memories)
            memory.valid_to_ms = memory.superseded_by = None  # back in force
        memory.status = body.status
    if history.snapshot(memory) | {"status": None} != before | {"status": None}:
        # What it says changed. Archiving, restoring (or undoing either) leaves 更新于 as it was.
        memory.updated_at_ms = now_ms()
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise Conflict("an active memory with this content already exists", code="duplicate_memory") from exc
    after = history.snapshot(memory)
    changed = {name for name, value in after.items() if before[name] != value}
    if changed:
        kind = EDITED
        if changed == {"status"}:
            kind = EVENT_ARCHIVED if memory.status == ARCHIVED else UNARCHIVED
        await history.record(session, memory, kind=kind, actor=ACTOR_USER, before=before)
    if "content" in changed or ("status" in changed and memory.status != ACTIVE):
        still = [memory.content] if memory.status == ACTIVE else []  # what it says now stays
        await forget_in_summaries(session, memory.agent_id, [said], still)  # what it said is no longer so
    return MemoryOut.model_validate(memory)


async def delete_memory(session: AsyncSession, user_id: str, memory_id: str) -> None:
    """The memory and its history go. Whatever it ever said leaves the digests, and the summaries
    its conversations' replies keep for an edit or a regenerate to put back: its history cannot tell
    a restore what left any more. What the other active memories say stays."""
    memory = await _require_memory(session, user_id, memory_id)
    said = [memory.content]
    for event in await repository.list_events(session, memory.id):
        said.extend(str(state["content"]) for state in (event.before, event.after) if state)
    others = await session.run_sync(lambda sync: repository.active_contents(sync.connection(), memory.agent_id))
    still = [content for content in others if memory.status != ACTIVE or content != memory.content]
    await forget_in_summaries(session, memory.agent_id, list(dict.fromkeys(said)), still, restore_points=True)
    await repository.delete_memory(session, memory.id)


async def save_candidates(
    session: AsyncSession,
    *,
    user_id: str,
    agent_id: str,
    candidates: list[MemoryDraft],
    source_message_id: str | None,
    max_memories: int,
) -> list[str]:
    """Insert up to two candidates, skipping exact duplicates of active memories; the new ids."""
    plan = ExtractionPlan(actor=ACTOR_RULES, adds=candidates[:MAX_CANDIDATES_PER_TURN])
    return await apply_plan(
        session,
        plan,
        user_id=user_id,
        agent_id=agent_id,
        source_message_id=source_message_id,
        max_memories=max_memories,
    )
