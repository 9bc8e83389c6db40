"""Long-term memory extraction after a saved turn, and recovery of turns a crash left half-done.

Extraction is tracked on the assistant message (extraction_state): the memories and the flip to
`done` commit together, and the flip is conditional, so a job that runs twice writes once.
"""

import logging
from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.chat.llm_summary import summarize_safely
from memchat.clock import now_ms
from memchat.conversations import repository as conversations
from memchat.db.engine import Database
from memchat.errors import UpstreamError
from memchat.llm.client import LLMClient
from memchat.memories import repository as memories_repository
from memchat.memories import service as memories
from memchat.memories.apply import apply_plan
from memchat.memories.llm_ops import (
    ParseResult,
    build_extraction_messages,
    extraction_response_format,
    parse_operations,
)
from memchat.memories.planning import (
    ExtractionPlan,
    KnownMemory,
    existing_for_prompt,
    fill_vectors,
    most_similar,
    plan_candidates,
    plan_operations,
)
from memchat.memories.rules import MemoryCandidate
from memchat.memories.semantic import MemoryEmbeddings
from memchat.models import Message
from memchat.models.memory_event import ACTOR_EMBEDDINGS, ACTOR_LLM, ACTOR_RULES
from memchat.models.message import EXTRACTION_DONE, EXTRACTION_PENDING, REPLY_INTERRUPTED, REPLY_PENDING
from memchat.settings import Settings

log = logging.getLogger("memchat.extraction")
rule_candidates = memories.rule_candidates


async def _save_rule_memories(
    session: AsyncSession, settings: Settings, assistant: Message, user_message_id: str | None, user_text: str | None
) -> list[str]:
    return await memories.save_candidates(
        session,
        settings,
        user_id=assistant.user_id,
        agent_id=assistant.agent_id,
        candidates=rule_candidates(user_text),
        source_message_id=user_message_id or assistant.id,
    )


@dataclass(frozen=True)
class ExtractionTools:
    """What the background strategies call: the LLM client and the embedder (None when not configured)."""

    llm: LLMClient | None = None
    embeddings: MemoryEmbeddings | None = None


async def _claim(session: AsyncSession, assistant_message_id: str) -> bool:
    """Flip pending -> done, conditionally: of two runs of one job, one writes."""
    claimed = await session.execute(
        update(Message)
        .where(Message.id == assistant_message_id, Message.extraction_state == EXTRACTION_PENDING)
        .values(extraction_state=EXTRACTION_DONE, updated_at_ms=now_ms())
    )
    return (claimed.rowcount or 0) > 0  # type: ignore[attr-defined]


async def _turn_messages(session: AsyncSession, assistant: Message) -> Message | None:
    if assistant.reply_to_id is None:
        return None
    return await conversations.get_message(session, assistant.conversation_id, assistant.reply_to_id)


async def _run_rules(db: Database, settings: Settings, assistant_message_id: str) -> list[str]:
    async with db.write() as session:
        if not await _claim(session, assistant_message_id):
            return []  # already done by another run
        assistant = await conversations.get_message_by_id(session, assistant_message_id)
        if assistant is None:
            return []
        user_message = await _turn_messages(session, assistant)
        return await _save_rule_memories(
            session,
            settings,
            assistant,
            user_message.id if user_message is not None else None,
            user_message.content if user_message is not None else None,
        )


async def _ask_llm(
    llm: LLMClient, settings: Settings, user_text: str, assistant_text: str, shown: list[KnownMemory]
) -> ParseResult:
    existing = existing_for_prompt(shown)
    max_ops = settings.memory_llm_max_ops
    raw = await llm.complete_structured(
        build_extraction_messages(user_text, assistant_text, existing, max_ops=max_ops),
        extraction_response_format(max_ops),
        temperature=0,
    )
    result = parse_operations(raw, existing, max_ops=max_ops)
    for reason in result.rejected:
        log.warning("LLM memory operation dropped: %s", reason)
    return result


async def _plan(
    settings: Settings, tools: ExtractionTools, user_text: str | None, assistant_text: str, known: list[KnownMemory]
) -> ExtractionPlan:
    """The configured strategy's plan; the rules' plan when the strategy cannot run or fails."""
    strategy, embeddings, llm = settings.memory_extractor, tools.embeddings, tools.llm
    if user_text is None:
        return ExtractionPlan(actor=ACTOR_RULES)
    try:
        gate: list[MemoryCandidate] | None = None
        if strategy in ("embeddings", "hybrid") and embeddings is not None:
            gate = await embeddings.extractor.extract(user_text)
            if strategy == "embeddings" or not gate:
                return await plan_candidates(gate, ACTOR_EMBEDDINGS, known, embeddings)
        if strategy in ("llm", "hybrid") and llm is not None:
            query = None
            if embeddings is not None:
                plan_vectors = ExtractionPlan(actor=ACTOR_LLM, model=embeddings.model)
                await fill_vectors(known, embeddings, plan_vectors)
                query = (await embeddings.passages([user_text]))[0]
            shown = most_similar(known, embeddings, query, settings.memory_llm_context_memories)
            try:
                result = await _ask_llm(llm, settings, user_text, assistant_text, shown)
            except UpstreamError as exc:
                log.warning("LLM memory extraction failed (%s); the %s run instead", exc.code, _FALLBACK[strategy])
                result = ParseResult(ok=False)
            if result.ok:
                plan = await plan_operations(result.operations, known, embeddings, ACTOR_LLM)
                if embeddings is not None:
                    plan.vectors = [*plan_vectors.vectors, *plan.vectors]
                return plan
            if gate is not None:  # hybrid: the classifier's own candidates
                return await plan_candidates(gate, ACTOR_EMBEDDINGS, known, embeddings)
    except Exception:
        log.exception("memory extraction (%s) failed; the rules run instead", strategy)
        embeddings = None  # the embedder may be what failed
    return await plan_candidates(rule_candidates(user_text), ACTOR_RULES, known, embeddings)


_FALLBACK = {"llm": "rules", "hybrid": "embeddings extractor"}


async def run_extraction(
    db: Database, settings: Settings, assistant_message_id: str, tools: ExtractionTools | None = None
) -> list[str]:
    """Extract memories for one saved turn still pending; returns the ids of memories added or changed.

    The v1 rules read and write in one transaction. The other strategies read in a short session,
    compute (embedder, LLM) with no transaction open, then write memories, events and the claim
    flip together in one short write transaction.
    """
    tools = tools or ExtractionTools()
    if not settings.extraction_in_background:
        return await _run_rules(db, settings, assistant_message_id)
    async with db.read() as session:
        assistant = await conversations.get_message_by_id(session, assistant_message_id)
        if assistant is None or assistant.extraction_state != EXTRACTION_PENDING:
            return []
        user_message = await _turn_messages(session, assistant)
        model = tools.embeddings.model if tools.embeddings is not None else None
        known = [
            KnownMemory.of(m, model) for m in await memories_repository.active_memories(session, assistant.agent_id)
        ]
    user_text = user_message.content if user_message is not None else None
    plan = await _plan(settings, tools, user_text, assistant.content, known)
    async with db.write() as session:
        if not await _claim(session, assistant_message_id):
            return []
        return await apply_plan(
            session,
            settings,
            plan,
            user_id=assistant.user_id,
            agent_id=assistant.agent_id,
            source_message_id=user_message.id if user_message is not None else assistant.id,
        )


async def extract_safely(
    db: Database, settings: Settings, assistant_message_id: str, tools: ExtractionTools | None = None
) -> None:
    """Extraction never reaches the client or undoes the turn: failures are logged, the job stays pending."""
    try:
        await run_extraction(db, settings, assistant_message_id, tools)
    except Exception:
        log.exception("memory extraction failed for message %s", assistant_message_id)


async def recover_unfinished_turns(
    db: Database, settings: Settings, tools: ExtractionTools | None = None
) -> tuple[int, int]:
    """At start-up: mark turns a dead process left streaming, run extraction it never ran.

    Returns (interrupted turns marked, extractions run).
    """
    async with db.write() as session:
        pending_replies = await conversations.messages_in_state(session, reply_state=REPLY_PENDING)
        for message in pending_replies:
            await conversations.set_message_fields(
                session, message.id, reply_state=REPLY_INTERRUPTED, updated_at_ms=now_ms()
            )
    async with db.read() as session:
        pending = [m.id for m in await conversations.messages_in_state(session, extraction_state=EXTRACTION_PENDING)]
    for message_id in pending:
        await extract_safely(db, settings, message_id, tools)
    if pending_replies or pending:
        log.info("recovered %d interrupted turns, ran %d pending extractions", len(pending_replies), len(pending))
    return len(pending_replies), len(pending)


async def backfill_vectors(db: Database, embeddings: MemoryEmbeddings, agent_id: str) -> int:
    """Embed the agent's active memories stored without a vector of the current model (rules, user edits)."""
    async with db.read() as session:
        known = [
            KnownMemory.of(m, embeddings.model) for m in await memories_repository.active_memories(session, agent_id)
        ]
    plan = ExtractionPlan(actor=ACTOR_EMBEDDINGS, model=embeddings.model)
    await fill_vectors(known, embeddings, plan)
    if plan.vectors:
        async with db.write() as session:
            for memory_id, content, vector in plan.vectors:
                await memories_repository.set_embedding(session, memory_id, content, vector, embeddings.model)
    return len(plan.vectors)


async def run_after_turn(
    db: Database,
    settings: Settings,
    tools: ExtractionTools,
    *,
    assistant_message_id: str,
    agent_id: str,
    conversation_id: str,
    extract: bool,
) -> None:
    """The background work after a saved turn, one job so that its LLM calls come in a fixed order:
    extraction (when not done inline), vectors for memories that lack one, the LLM summary when due.
    Each step logs its own failure and never stops the next."""
    if extract:
        await extract_safely(db, settings, assistant_message_id, tools)
    if tools.embeddings is not None:
        try:
            await backfill_vectors(db, tools.embeddings, agent_id)
        except Exception:
            log.exception("embedding memories of agent %s failed", agent_id)
    if settings.summary_strategy == "llm" and tools.llm is not None:
        await summarize_safely(db, settings, tools.llm, conversation_id)
