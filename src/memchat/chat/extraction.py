"""Long-term memory extraction after a saved turn, and recovery of turns a crash left half-done.

Extraction is tracked on the assistant message (extraction_state): the memories and the flip to
`done` commit together, and the flip is conditional, so a job that runs twice writes once.
"""

import logging

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.clock import now_ms
from memchat.conversations import repository as conversations
from memchat.db.engine import Database
from memchat.memories import service as memories
from memchat.models import Message
from memchat.models.message import EXTRACTION_DONE, EXTRACTION_PENDING, REPLY_INTERRUPTED, REPLY_PENDING
from memchat.settings import Settings

log = logging.getLogger("memchat.extraction")


async def _save_rule_memories(
    session: AsyncSession, settings: Settings, assistant: Message, user_message: Message | None
) -> list[str]:
    return await memories.save_candidates(
        session,
        settings,
        user_id=assistant.user_id,
        agent_id=assistant.agent_id,
        candidates=memories.rule_candidates(user_message.content if user_message is not None else None),
        source_message_id=user_message.id if user_message is not None else assistant.id,
    )


async def extract_inline(
    session: AsyncSession, settings: Settings, assistant: Message, user_message: Message | None
) -> bool:
    """Rule extraction inside the turn's own transaction, behind a savepoint.

    The assistant message was inserted as `done`; on failure the savepoint rolls back, the job
    is marked pending (for the background run or the next start-up) and the turn still commits.
    """
    try:
        async with session.begin_nested():
            await _save_rule_memories(session, settings, assistant, user_message)
        return True
    except Exception:
        log.exception("memory extraction failed for message %s; left pending", assistant.id)
        await conversations.set_message_fields(session, assistant.id, extraction_state=EXTRACTION_PENDING)
        return False


async def run_extraction(db: Database, settings: Settings, assistant_message_id: str) -> list[str]:
    """Extract memories for one saved turn still pending; returns the ids of memories created."""
    async with db.write() as session:
        claimed = await session.execute(
            update(Message)
            .where(Message.id == assistant_message_id, Message.extraction_state == EXTRACTION_PENDING)
            .values(extraction_state=EXTRACTION_DONE, updated_at_ms=now_ms())
        )
        if (claimed.rowcount or 0) == 0:  # type: ignore[attr-defined]
            return []  # already done by another run
        assistant = await conversations.get_message_by_id(session, assistant_message_id)
        if assistant is None:
            return []
        user_message = None
        if assistant.reply_to_id is not None:
            user_message = await conversations.get_message(session, assistant.conversation_id, assistant.reply_to_id)
        return await _save_rule_memories(session, settings, assistant, user_message)


async def extract_safely(db: Database, settings: Settings, assistant_message_id: str) -> None:
    """Extraction never reaches the client or undoes the turn: failures are logged, the job stays pending."""
    try:
        await run_extraction(db, settings, assistant_message_id)
    except Exception:
        log.exception("memory extraction failed for message %s", assistant_message_id)


async def recover_unfinished_turns(db: Database, settings: Settings) -> tuple[int, int]:
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
        await extract_safely(db, settings, message_id)
    if pending_replies or pending:
        log.info("recovered %d interrupted turns, ran %d pending extractions", len(pending_replies), len(pending))
    return len(pending_replies), len(pending)
