"""Memory v2 extraction, write phase: apply a plan, with an event row for every change.

Runs inside the caller's short write transaction. Each change has a savepoint of its own: one
that no longer applies (the memory was archived or deleted meanwhile, or its new content is
already another active memory) is dropped and logged, and the rest still commit.
"""

import logging
from dataclasses import dataclass, field

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.clock import now_ms
from memchat.conversations.repository import forget_in_summaries
from memchat.memories import history, repository
from memchat.memories.extraction.planning import ExtractionPlan, MemoryChange
from memchat.models.memory import ACTIVE
from memchat.models.memory import ARCHIVED as STATUS_ARCHIVED
from memchat.models.memory_event import ARCHIVED, EXTRACTED, MERGED, SUPERSEDED, UPDATED

log = logging.getLogger("memchat.extraction")


@dataclass
class AppliedPlan:
    """What a plan changed, by memory id: for a caller that tells the user (the chat turn)."""

    added: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # replaced by a change of mind (one in `added`)

    def note(self, kind: str, memory_id: str) -> None:
        lists = {MERGED: self.merged, UPDATED: self.updated, ARCHIVED: self.archived, SUPERSEDED: self.superseded}
        lists.get(kind, self.added).append(memory_id)


async def _apply_change(
    session: AsyncSession,
    plan: ExtractionPlan,
    change: MemoryChange,
    agent_id: str,
    source_message_id: str | None,
    left: list[str],
    kept: list[str],
) -> str | None:
    memory = await repository.get_memory_of_agent(session, agent_id, change.memory_id)
    if memory is None or memory.status != ACTIVE:
        log.info("memory %s is gone or archived; %s dropped", change.memory_id, change.kind)
        return None
    before = history.snapshot(memory)
    said = memory.content
    if change.kind == ARCHIVED:
        memory.status = STATUS_ARCHIVED
        memory.valid_to_ms = now_ms()
    else:
        if change.event_date is not None:
            memory.event_date = change.event_date
        assert change.content is not None
        history.set_content(memory, change.content)
        if change.kind == MERGED:
            memory.importance = max(memory.importance, change.importance or 1)
        elif change.importance is not None:
            memory.importance = change.importance
        if change.vector is not None and plan.model is not None:
            memory.embedding, memory.embedding_model = change.vector, plan.model
    if history.snapshot(memory) == before:
        return None  # nothing changes: no event
    memory.updated_at_ms = now_ms()
    try:
        async with session.begin_nested():
            await history.record(
                session, memory, kind=change.kind, actor=plan.actor, before=before, source_message_id=source_message_id
            )
    except IntegrityError:
        log.info("%s of memory %s would duplicate another active memory; dropped", change.kind, memory.id)
        await session.refresh(memory)
        return None
    if memory.content != said:
        # a rewrite (an update, or a merge in the newer words) no longer says the old words: they
        # leave the digest too, all but the clauses the memory still says
        left.append(said)
        kept.append(memory.content)
    elif change.kind == ARCHIVED:
        left.append(said)
    return memory.id


async def apply_plan(
    session: AsyncSession,
    plan: ExtractionPlan,
    *,
    user_id: str,
    agent_id: str,
    source_message_id: str | None,
    max_memories: int,
    said_at_ms: int | None = None,
    outcome: AppliedPlan | None = None,
) -> list[str]:
    """Write the plan; returns the ids of the memories added or changed (superseded ones included).

    `said_at_ms` (v2 extractors): when the user said it, stored as the new memories' `valid_from_ms`
    and the superseded ones' `valid_to_ms`. `outcome`, when given, is filled with what changed how.
    """
    outcome = outcome if outcome is not None else AppliedPlan()
    left: list[str] = []  # what memories that left (archived, superseded, rewritten) said
    kept: list[str] = []  # what the memories that replaced or rewrote them say
    for backfilled_id, content, vector in plan.vectors:
        assert plan.model is not None
        await repository.set_embedding(session, backfilled_id, content, vector, plan.model)
    touched: list[str] = []
    for change in plan.changes:
        if (changed := await _apply_change(session, plan, change, agent_id, source_message_id, left, kept)) is not None:
            touched.append(changed)
            outcome.note(change.kind, changed)
    for new in plan.adds:
        # a change of mind replaces memories, so it does not count against the cap
        if not new.supersedes and not await repository.has_room(session, agent_id, max_memories):
            log.warning("agent %s is at its memory cap; new memory dropped", agent_id)
            break
        memory_id = await repository.insert_if_new(
            session,
            user_id=user_id,
            agent_id=agent_id,
            type=new.type,
            content=new.content,
            importance=new.importance,
            source_message_id=source_message_id,
            now_ms=now_ms(),
            embedding=new.vector,
            embedding_model=plan.model,
            valid_from_ms=said_at_ms,
            event_date=new.event_date,
        )
        if memory_id is None:
            continue  # the same content is already an active memory
        memory = await repository.get_memory_of_agent(session, agent_id, memory_id)
        assert memory is not None
        await history.record(
            session, memory, kind=EXTRACTED, actor=plan.actor, before=None, source_message_id=source_message_id
        )
        touched.append(memory_id)
        outcome.added.append(memory_id)
        for old_id in new.supersedes:
            if said := await _supersede(session, plan, agent_id, old_id, memory_id, said_at_ms, source_message_id):
                touched.append(old_id)
                outcome.superseded.append(old_id)
                left.append(said)
                kept.append(new.content)
    await forget_in_summaries(session, agent_id, left, kept)
    return touched


async def _supersede(
    session: AsyncSession,
    plan: ExtractionPlan,
    agent_id: str,
    old_id: str,
    new_id: str,
    said_at_ms: int | None,
    source_message_id: str | None,
) -> str | None:
    """Retire `old_id` in favour of `new_id`: archived (not deleted), valid_to, superseded_by, an event.
    Returns what the retired memory said (None when it was gone already)."""
    memory = await repository.get_memory_of_agent(session, agent_id, old_id)
    if memory is None or memory.status != ACTIVE:
        log.info("memory %s is gone or archived; superseding it dropped", old_id)
        return None
    before = history.snapshot(memory)
    at = now_ms()
    memory.status = STATUS_ARCHIVED
    memory.valid_to_ms = said_at_ms if said_at_ms is not None else at
    memory.superseded_by = new_id
    memory.updated_at_ms = at
    await history.record(
        session, memory, kind=SUPERSEDED, actor=plan.actor, before=before, source_message_id=source_message_id
    )
    return memory.content
