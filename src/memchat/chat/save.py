"""Commit point 2: everything a finished reply changes, in one transaction (save_assistant_turn),
retried while the database is busy or unreachable (store_reply)."""

import asyncio
import logging
from dataclasses import dataclass

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from memchat.agents.repository import set_latest_message
from memchat.chat.context import TurnContext
from memchat.chat.digest_summary import roll_summary
from memchat.clock import now_ms
from memchat.conversations import messages, turn_writes
from memchat.conversations import repository as conversations
from memchat.db.engine import Database
from memchat.models.message import EXTRACTION_PENDING, REPLY_DONE, REPLY_FAILED
from memchat.text import normalize

log = logging.getLogger("memchat.turn")

_MAX_SAVE_BACKOFF_S = 2.0


class TurnLost:
    """The turn is no longer this instance's to answer: another instance took it over after its
    lease ran out, or an edit replaced its user message. Its reply is not stored."""


TURN_LOST = TurnLost()


@dataclass(frozen=True)
class SavedReply:
    id: str
    agent_id: str
    conversation_id: str
    summary: str | None = None
    message_count: int | None = None


def save_assistant_turn(
    conn: Connection,
    turn: TurnContext,
    assistant_text: str,
    *,
    status: str,
    extraction_state: str = EXTRACTION_PENDING,
    summary_strategy: str = "rules",
    reasoning: str | None = None,
) -> SavedReply | TurnLost | None:
    """Insert the reply, roll the summary, count it, update the agent list's preview.

    Without agent, conversation or text nothing is written to the conversation; only the
    preview moves (when there is an agent). Returns the stored assistant message, or TURN_LOST
    when the turn no longer owns its live user message (nothing written).
    """
    message = normalize(assistant_text)
    now = now_ms()
    # the conversation's row lock, before the turn's row as in commit point 1; the summary as stored
    # now, which nothing changes until this transaction ends
    previous = conversations.lock_branch(conn, turn.conversation_id) if turn.conversation_id is not None else None
    if turn.user_message_id is not None and turn.owner is not None:
        state = REPLY_DONE if turn.agent_id and turn.conversation_id and message else REPLY_FAILED
        if not messages.finish_turn(conn, turn.user_message_id, owner=turn.owner, reply_state=state, now_ms=now):
            # Another instance took this turn over after its lease ran out (its reply counts), or
            # an edit superseded the user message: a reply to it would be an orphan.
            return TURN_LOST
    if turn.agent_id is None or turn.conversation_id is None or message is None:
        if turn.agent_id is not None and message is not None:
            set_latest_message(conn, agent_id=turn.agent_id, text=message, now_ms=now)
        return None

    # What the summary rolls on is what is stored now (`previous`, read under the lock): the same
    # as commit point 1 read when no other turn of the conversation ended meanwhile, and with their
    # lines when one did. The reply keeps it, so that an edit or a regenerate replacing this turn
    # can put it back.
    values = messages.message_values(
        conversation_id=turn.conversation_id,
        user_id=turn.user_id,
        agent_id=turn.agent_id,
        role="assistant",
        content=message,
        now_ms=now,
        message_id=turn.reply_id,
        status=status,
        reply_to_id=turn.user_message_id,
        extraction_state=extraction_state,
        summary_before=previous or "",
        reasoning=reasoning,
    )
    summary = roll_summary(summary_strategy, previous, turn.recent, turn.user_text, message)
    count = turn_writes.insert_reply(conn, values, summary=summary)
    return SavedReply(values["id"], turn.agent_id, turn.conversation_id, summary, count)


class NotStored:
    """The save did not succeed before its deadline (the reply exists only in memory)."""


NOT_STORED = NotStored()


async def store_reply(
    db: Database,
    turn: TurnContext,
    text: str,
    *,
    status: str,
    extraction_state: str,
    summary_strategy: str,
    within_s: float,
    reasoning: str | None = None,
) -> SavedReply | TurnLost | None | NotStored:
    """save_assistant_turn, retried while the database is busy or unreachable, for at most `within_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    attempt = 0
    while True:
        attempt += 1
        try:
            return await db.run_write(
                save_assistant_turn,
                turn,
                text,
                status=status,
                extraction_state=extraction_state,
                summary_strategy=summary_strategy,
                reasoning=reasoning,
            )
        except DBAPIError:
            # The reply exists only in memory now: a busy database must not lose it.
            delay = min(0.2 * attempt, _MAX_SAVE_BACKOFF_S)
            if loop.time() + delay > deadline:
                log.warning("saving the turn failed %d times", attempt, exc_info=True)
                return NOT_STORED
            log.warning("saving the turn failed (attempt %d), retrying", attempt)
            await asyncio.sleep(delay)
