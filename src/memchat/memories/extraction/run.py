"""Long-term memory extraction for one saved turn, and vectors for memories stored without one.

Extraction is tracked on the assistant message (extraction_state): the memories and the flip to
`done` commit together, and the flip is conditional, so a job that runs twice writes once.
"""

import logging
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from memchat.clock import now_ms
from memchat.conversations import messages
from memchat.db.engine import Database
from memchat.errors import UpstreamError
from memchat.llm.client import LLMClient
from memchat.memories import repository
from memchat.memories.extraction.apply import AppliedPlan, apply_plan
from memchat.memories.extraction.changes import Changes
from memchat.memories.extraction.dropped import with_revisions
from memchat.memories.extraction.llm import (
    ParseResult,
    build_extraction_messages,
    extraction_response_format,
    parse_operations,
)
from memchat.memories.extraction.pipeline import MemoryPipeline
from memchat.memories.extraction.planning import (
    ExtractionPlan,
    fill_vectors,
    most_similar,
    plan_candidates,
    plan_operations,
)
from memchat.memories.language.rules import extract_candidate_memories
from memchat.memories.language.semantic import MemoryEmbeddings
from memchat.memories.types import MemoryDraft, StoredMemory
from memchat.models import Message
from memchat.models.memory_event import ACTOR_EMBEDDINGS, ACTOR_LLM, ACTOR_RULES
from memchat.models.message import EXTRACTION_PENDING

log = logging.getLogger("memchat.extraction")

_FALLBACK = {"llm": "rules", "hybrid": "embeddings extractor"}


async def _ask_llm(
    llm: LLMClient, max_ops: int, user_text: str, assistant_text: str, shown: list[StoredMemory]
) -> ParseResult:
    raw = await llm.complete_structured(
        build_extraction_messages(user_text, assistant_text, shown, max_ops=max_ops),
        extraction_response_format(max_ops),
        temperature=0,
    )
    result = parse_operations(raw, shown, max_ops=max_ops)
    for reason in result.rejected:
        log.warning("LLM memory operation dropped: %s", reason)
    return result


async def _plan(
    pipeline: MemoryPipeline,
    user_text: str | None,
    assistant_text: str,
    known: list[StoredMemory],
    said_at_ms: int | None = None,
) -> ExtractionPlan:
    """The configured strategy's plan; the rules' plan when the strategy cannot run or fails."""
    strategy, embeddings, llm = pipeline.extractor, pipeline.embeddings, pipeline.llm
    changes = Changes(pipeline.changes, said_at_ms, pipeline.timezone)
    if user_text is None:
        return ExtractionPlan(actor=ACTOR_RULES)
    try:
        gate: list[MemoryDraft] | None = None
        if strategy in ("embeddings", "hybrid") and embeddings is not None:
            gate = await embeddings.extractor.extract(user_text)
            if changes.supersede:
                gate = await with_revisions(user_text, gate, known, embeddings, said_at_ms)
            if strategy == "embeddings" or not gate:
                return await plan_candidates(gate, ACTOR_EMBEDDINGS, known, embeddings, changes=changes)
        if strategy in ("llm", "hybrid") and llm is not None:
            query = None
            if embeddings is not None:
                plan_vectors = ExtractionPlan(actor=ACTOR_LLM, model=embeddings.model)
                await fill_vectors(known, embeddings, plan_vectors)
                query = (await embeddings.passages([user_text]))[0]
            shown = most_similar(known, embeddings, query, pipeline.llm_context_memories)
            try:
                result = await _ask_llm(llm, pipeline.llm_max_ops, user_text, assistant_text, shown)
            except UpstreamError as exc:
                log.warning("LLM memory extraction failed (%s); the %s run instead", exc.code, _FALLBACK[strategy])
                result = ParseResult(ok=False)
            if result.ok:
                plan = await plan_operations(result.operations, known, embeddings, ACTOR_LLM, changes=changes)
                if embeddings is not None:
                    plan.vectors = [*plan_vectors.vectors, *plan.vectors]
                return plan
            if gate is not None:  # hybrid: the classifier's own candidates
                return await plan_candidates(gate, ACTOR_EMBEDDINGS, known, embeddings, changes=changes)
    except Exception:
        log.exception("memory extraction (%s) failed; the rules run instead", strategy)
        embeddings = None  # the embedder may be what failed
    return await plan_candidates(extract_candidate_memories(user_text), ACTOR_RULES, known, embeddings, changes=changes)


async def run_extraction(
    db: Database,
    pipeline: MemoryPipeline,
    assistant_message_id: str,
    *,
    outcome: AppliedPlan | None = None,
    candidates: Sequence[MemoryDraft] | None = None,
) -> list[str]:
    """Extract memories for one saved turn still pending; returns the ids of memories added or changed.

    The v1 rules read and write in one transaction. The other strategies read in a short session,
    compute (embedder, LLM) with no transaction open, then write memories, events and the claim
    flip together in one short write transaction. `outcome`, when given, is filled with what was
    added, merged, updated, archived and superseded (for telling the user). `candidates`: the v1
    rules' candidates when the turn already read them (`MemoryPipeline.after_turn`).
    """
    if pipeline.inline:
        return await _run_rules(db, pipeline.max_memories, assistant_message_id, outcome, candidates)
    async with db.read() as session:
        assistant = await messages.get_message_by_id(session, assistant_message_id)
        if assistant is None or assistant.extraction_state != EXTRACTION_PENDING:
            return []
        user_message = await _user_message(session, assistant)
        known = await repository.active_memories(session, assistant.agent_id)
    user_text = user_message.content if user_message is not None else None
    said_at_ms = (user_message or assistant).created_at_ms
    plan = await _plan(pipeline, user_text, assistant.content, known, said_at_ms)
    async with db.write() as session:
        if not await messages.claim_extraction(session, assistant_message_id, now_ms()):
            return []
        return await _apply(session, plan, assistant, user_message, pipeline.max_memories, said_at_ms, outcome)


async def _user_message(session: AsyncSession, assistant: Message) -> Message | None:
    if assistant.reply_to_id is None:
        return None
    return await messages.get_message(session, assistant.conversation_id, assistant.reply_to_id)


async def _run_rules(
    db: Database,
    max_memories: int,
    assistant_message_id: str,
    outcome: AppliedPlan | None = None,
    candidates: Sequence[MemoryDraft] | None = None,
) -> list[str]:
    async with db.write() as session:
        if not await messages.claim_extraction(session, assistant_message_id, now_ms()):
            return []  # already done by another run
        assistant = await messages.get_message_by_id(session, assistant_message_id)
        if assistant is None:
            return []
        user_message = await _user_message(session, assistant)
        if candidates is None:  # recovery after a restart: the turn's reading did not survive it
            candidates = extract_candidate_memories(user_message.content if user_message is not None else None)
        plan = ExtractionPlan(actor=ACTOR_RULES, adds=list(candidates))
        return await _apply(session, plan, assistant, user_message, max_memories, None, outcome)


async def _apply(
    session: AsyncSession,
    plan: ExtractionPlan,
    assistant: Message,
    user_message: Message | None,
    max_memories: int,
    said_at_ms: int | None,
    outcome: AppliedPlan | None,
) -> list[str]:
    """Write the plan; each memory's source is the user message of the turn (the reply when there is none)."""
    return await apply_plan(
        session,
        plan,
        user_id=assistant.user_id,
        agent_id=assistant.agent_id,
        source_message_id=user_message.id if user_message is not None else assistant.id,
        max_memories=max_memories,
        said_at_ms=said_at_ms,
        outcome=outcome,
    )


async def extract_safely(db: Database, pipeline: MemoryPipeline, assistant_message_id: str) -> list[str]:
    """Extraction never reaches the client or undoes the turn: failures are logged, the job stays pending.
    The ids of the memories added or changed ([] on failure)."""
    try:
        return await run_extraction(db, pipeline, assistant_message_id)
    except Exception:
        log.exception("memory extraction failed for message %s", assistant_message_id)
        return []


async def backfill_vectors(db: Database, embeddings: MemoryEmbeddings, agent_id: str) -> int:
    """Embed the agent's active memories stored without a vector of the current model (rules, user edits)."""
    async with db.read() as session:
        known = await repository.active_memories(session, agent_id)
    plan = ExtractionPlan(actor=ACTOR_EMBEDDINGS, model=embeddings.model)
    await fill_vectors(known, embeddings, plan)
    if plan.vectors:
        async with db.write() as session:
            for memory_id, content, vector in plan.vectors:
                await repository.set_embedding(session, memory_id, content, vector, embeddings.model)
    return len(plan.vectors)


async def embed_written_memories(db: Database, embeddings: MemoryEmbeddings, agent_id: str) -> None:
    """After a memory is created or edited through the API (its transaction committed): its vector
    now, so that recall and changes of mind see it before the next turn. A failure leaves it to the
    next turn's backfill."""
    try:
        await backfill_vectors(db, embeddings, agent_id)
    except Exception:
        log.warning("embedding the agent's new memories failed; the next turn embeds them", exc_info=True)
