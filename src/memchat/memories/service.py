import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.service import require_agent
from memchat.clock import now_ms
from memchat.errors import Conflict, InvalidInput
from memchat.memories import history, repository
from memchat.memories.apply import apply_plan
from memchat.memories.planning import ExtractionPlan, NewMemory
from memchat.memories.recall import RecallCandidate, StoredMemory, rank_memories
from memchat.memories.rules import MAX_CANDIDATES_PER_TURN, MemoryCandidate, extract_candidate_memories
from memchat.memories.schemas import MemoryCreate, MemoryOut, MemoryPatch
from memchat.models.memory import ACTIVE, ARCHIVED
from memchat.models.memory_event import ACTOR_RULES, ACTOR_USER, CREATED, EDITED
from memchat.models.memory_event import ARCHIVED as EVENT_ARCHIVED
from memchat.settings import Settings
from memchat.text import normalize

if TYPE_CHECKING:
    from memchat.memories.semantic import MemoryEmbeddings

log = logging.getLogger("memchat.memories")
M = TypeVar("M", bound=StoredMemory)


async def list_memories(session: AsyncSession, user_id: str, agent_id: str, status: str | None) -> list[MemoryOut]:
    await require_agent(session, user_id, agent_id)
    rows = await repository.list_memories(session, user_id=user_id, agent_id=agent_id, status=status)
    return [MemoryOut.model_validate(m) for m in rows]


_require_memory = history.require_memory


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
    memory = await _require_memory(session, user_id, memory_id)
    await history.record(session, memory, kind=CREATED, actor=ACTOR_USER, before=None)
    return MemoryOut.model_validate(memory)


async def update_memory(
    session: AsyncSession, settings: Settings, user_id: str, memory_id: str, body: MemoryPatch
) -> MemoryOut:
    memory = await _require_memory(session, user_id, memory_id)
    before = history.snapshot(memory)
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
            await _check_capacity(session, settings, memory.agent_id)
        memory.status = body.status
    memory.updated_at_ms = now_ms()
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise Conflict("an active memory with this content already exists", code="duplicate_memory") from exc
    after = history.snapshot(memory)
    changed = {name for name, value in after.items() if before[name] != value}
    if changed:
        kind = EVENT_ARCHIVED if changed == {"status"} and memory.status == ARCHIVED else EDITED
        await history.record(session, memory, kind=kind, actor=ACTOR_USER, before=before)
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
    adds = [NewMemory(c.type, c.content, c.importance, None) for c in candidates[:MAX_CANDIDATES_PER_TURN]]
    plan = ExtractionPlan(actor=ACTOR_RULES, adds=adds)
    return await apply_plan(
        session, settings, plan, user_id=user_id, agent_id=agent_id, source_message_id=source_message_id
    )


def rule_candidates(user_text: str | None) -> list[MemoryCandidate]:
    return extract_candidate_memories(user_text)


async def recall_for_prompt(
    settings: Settings, embeddings: "MemoryEmbeddings | None", user_text: str | None, active: Sequence[M]
) -> list[M]:
    """The memories a turn injects. v1: the first `memory_injection_limit` in v1 order (`active` is in it).

    ranked: boundaries first, then importance, recency and similarity to the user's message, within
    the limit and the character budget. Embedding the message is bounded by a timeout; when it
    fails or times out similarity is left out, and with no embedder the v1 order stays.
    """
    limit = settings.memory_injection_limit
    if settings.memory_recall != "ranked" or embeddings is None:
        return list(active[:limit])
    similarities: list[float | None] = [None] * len(active)
    with_vectors = [
        i for i, m in enumerate(active) if m.embedding is not None and m.embedding_model == embeddings.model
    ]
    if user_text and with_vectors:
        try:
            query = await asyncio.wait_for(embeddings.query(user_text), settings.memory_recall_timeout_s)
            scores = embeddings.scores(query, [active[i].embedding or b"" for i in with_vectors])
            for i, score in zip(with_vectors, scores, strict=True):
                similarities[i] = float(score)
        except Exception:
            log.warning("embedding the user message for recall failed; ranking without similarity", exc_info=True)
    candidates = [
        RecallCandidate(i, m.type, m.importance, m.updated_at_ms, m.content, similarities[i])
        for i, m in enumerate(active)
    ]
    ranked = rank_memories(candidates, now_ms=now_ms(), limit=limit, char_budget=settings.memory_recall_char_budget)
    return [active[c.index] for c in ranked]
