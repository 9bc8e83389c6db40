"""What runs after a turn is stored: the one place that decides.

Inline, before the body ends: the v1 rules, when the user's text makes a candidate (a client that
reloads right after the stream sees the memory). In the background, after the commit, by id and
safe to run twice: every other extraction strategy, vectors for memories stored without one, and
the LLM summary when it is due. Each step logs its own failure and never stops the next.
"""

import asyncio
import logging
import time

from memchat.chat.events import MemoryNote
from memchat.chat.llm_summary import summarize_safely
from memchat.chat.save import SavedReply
from memchat.chat.services import ChatServices
from memchat.db.engine import Database
from memchat.memories.extraction.pipeline import AfterTurn
from memchat.memories.extraction.run import backfill_vectors, extract_safely, run_extraction
from memchat.memories.repository import get_memory
from memchat.models.memory import ACTIVE
from memchat.models.message import EXTRACTION_DONE
from memchat.observability import metrics

log = logging.getLogger("memchat.after_turn")


async def after_saved(services: ChatServices, saved: SavedReply, after: AfterTurn) -> list[str]:
    """Right after commit point 2, as `MemoryPipeline.after_turn` decided when the reply was stored:
    the inline rules' candidates written (ids of the memories they saved), then the background job."""
    memory = services.memory
    extracted_inline = after.state == EXTRACTION_DONE
    saved_ids: list[str] = []
    saved_at = time.perf_counter()
    if after.inline is not None and not extracted_inline:
        try:
            saved_ids = await run_extraction(services.db, memory, saved.id, candidates=after.inline)
            extracted_inline = True
            metrics.extraction_done("inline", saved_at)
        except Exception:
            log.exception("memory extraction failed for message %s; left pending", saved.id)
    summary_llm = services.summary.strategy == "llm"
    if not extracted_inline or memory.embeddings is not None or summary_llm:
        extracted: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        metrics.after_turn_queued()
        services.background.spawn(
            run_after_turn(services, saved, extract=not extracted_inline, extracted=extracted, saved_at=saved_at),
            name=f"after-turn-{saved.id}",
        )
        if not extracted_inline and memory.stream_wait_s > 0:
            # a background extraction that is done this soon still reaches the turn's own stream
            # (a client shows the memory at once); a slower one the client reads when it is stored
            try:
                saved_ids = await asyncio.wait_for(asyncio.shield(extracted), memory.stream_wait_s)
            except TimeoutError:
                pass
    return saved_ids


async def run_after_turn(
    services: ChatServices,
    saved: SavedReply,
    *,
    extract: bool,
    extracted: "asyncio.Future[list[str]] | None" = None,
    saved_at: float | None = None,
) -> None:
    """The background work after a saved turn, one job so that its LLM calls come in a fixed order:
    extraction (when not done inline), vectors for memories that lack one, the LLM summary when due.
    `extracted` gets the ids extraction added or changed as soon as it is done."""
    try:
        await _after_turn_job(services, saved, extract=extract, extracted=extracted, saved_at=saved_at)
    finally:
        if saved_at is not None:
            metrics.after_turn_done()


async def _after_turn_job(
    services: ChatServices,
    saved: SavedReply,
    *,
    extract: bool,
    extracted: "asyncio.Future[list[str]] | None",
    saved_at: float | None,
) -> None:
    db, memory = services.db, services.memory
    ids = await extract_safely(db, memory, saved.id) if extract else []
    if extract and saved_at is not None:
        metrics.extraction_done("background", saved_at)
    if extracted is not None and not extracted.done():
        extracted.set_result(ids)
    if memory.embeddings is not None:
        try:
            await backfill_vectors(db, memory.embeddings, saved.agent_id)
        except Exception:
            log.exception("embedding memories of agent %s failed", saved.agent_id)
    summary = services.summary
    if summary.strategy == "llm":
        await summarize_safely(
            db,
            services.llm,
            saved.conversation_id,
            every_n_turns=summary.every_n_turns,
            max_chars=summary.llm_max_chars,
        )


async def memory_notes(db: Database, user_id: str, memory_ids: list[str]) -> tuple[MemoryNote, ...]:
    """The memories a turn added, for its stream's event; one a change of mind archived is no news."""
    async with db.read() as session:
        rows = [await get_memory(session, user_id, memory_id) for memory_id in memory_ids]
    return tuple(
        MemoryNote(row.id, row.type, row.content, row.importance, "added")
        for row in rows
        if row is not None and row.status == ACTIVE
    )
