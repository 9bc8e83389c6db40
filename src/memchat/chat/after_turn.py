"""What runs after a turn is stored, and what a restart finds half-done: the one place that decides.

Inline, before the body ends: the v1 rules, when the user's text makes a candidate (a client that
reloads right after the stream sees the memory). In the background, after the commit, by id and
safe to run twice: every other extraction strategy, vectors for memories stored without one, and
the LLM summary when it is due. Each step logs its own failure and never stops the next.
"""

import asyncio
import logging

from sqlalchemy.exc import DBAPIError

from memchat.chat.llm_summary import summarize_safely
from memchat.chat.save import SavedReply
from memchat.chat.services import ChatServices
from memchat.clock import now_ms
from memchat.conversations import messages
from memchat.db.engine import Database
from memchat.instances import seen
from memchat.memories.extraction.pipeline import AfterTurn, MemoryPipeline
from memchat.memories.extraction.run import backfill_vectors, extract_safely, run_extraction
from memchat.models.message import EXTRACTION_DONE, EXTRACTION_PENDING

log = logging.getLogger("memchat.after_turn")


async def after_saved(services: ChatServices, saved: SavedReply, after: AfterTurn) -> list[str]:
    """Right after commit point 2, as `MemoryPipeline.after_turn` decided when the reply was stored:
    the inline rules' candidates written (ids of the memories they saved), then the background job."""
    memory = services.memory
    extracted_inline = after.state == EXTRACTION_DONE
    saved_ids: list[str] = []
    if after.inline is not None and not extracted_inline:
        try:
            saved_ids = await run_extraction(services.db, memory, saved.id, candidates=after.inline)
            extracted_inline = True
        except Exception:
            log.exception("memory extraction failed for message %s; left pending", saved.id)
    summary_llm = services.summary.strategy == "llm"
    if not extracted_inline or memory.embeddings is not None or summary_llm:
        extracted: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        services.background.spawn(
            run_after_turn(services, saved, extract=not extracted_inline, extracted=extracted),
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
    services: ChatServices, saved: SavedReply, *, extract: bool, extracted: "asyncio.Future[list[str]] | None" = None
) -> None:
    """The background work after a saved turn, one job so that its LLM calls come in a fixed order:
    extraction (when not done inline), vectors for memories that lack one, the LLM summary when due.
    `extracted` gets the ids extraction added or changed as soon as it is done."""
    db, memory = services.db, services.memory
    ids = await extract_safely(db, memory, saved.id) if extract else []
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


async def interrupt_expired_turns(db: Database) -> int:
    """Turns whose lease ran out become interrupted: their instance died (or lost the database).
    Any instance may do this, at any time: a live lease is never touched."""
    async with db.write() as session:
        return await messages.interrupt_expired_turns(session, now_ms())


async def watch_leases(services: ChatServices) -> None:
    """Runs for the life of the process. Three times a lease: renew the leases of the turns this
    instance is answering (one statement for all of them); once a lease: mark interrupted the
    turns whose lease ran out (their instance died), whoever owned them."""
    lease_s = services.limits.turn_lease_s
    rounds = 0
    while True:
        await asyncio.sleep(lease_s / 3)
        rounds += 1
        try:
            if services.registered:
                await services.db.run_write(seen, services.instance_id, now_ms=now_ms())
            if services.active_turns:
                until = now_ms() + int(lease_s * 1000)
                ids = sorted(services.active_turns)
                await services.db.run_write(messages.renew_leases, ids, owner=services.instance_id, until_ms=until)
            if rounds % 3 == 0 and (count := await interrupt_expired_turns(services.db)):
                log.info("%d turns whose lease ran out marked interrupted", count)
        except DBAPIError as exc:
            log.warning("keeping turn leases failed: %s", exc.orig)
        except Exception:
            log.exception("keeping turn leases failed")


async def recover_unfinished_turns(db: Database, memory: MemoryPipeline) -> tuple[int, int]:
    """At start-up: mark turns whose lease ran out, run extraction a dead process never ran.
    Other instances' live turns are left alone.

    Returns (interrupted turns marked, extractions run).
    """
    interrupted = await interrupt_expired_turns(db)
    async with db.read() as session:
        pending = await messages.message_ids_in_state(session, extraction_state=EXTRACTION_PENDING)
    for message_id in pending:
        await extract_safely(db, memory, message_id)
    if interrupted or pending:
        log.info("recovered %d interrupted turns, ran %d pending extractions", interrupted, len(pending))
    return interrupted, len(pending)
