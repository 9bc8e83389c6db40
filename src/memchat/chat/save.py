"""save_assistant_turn: everything a finished reply changes, in one transaction."""

from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.repository import set_latest_message
from memchat.chat.context import TurnContext
from memchat.chat.summary import build_conversation_summary
from memchat.clock import now_ms
from memchat.conversations import repository as conversations
from memchat.models import Message
from memchat.models.message import (
    COMPLETED,
    EXTRACTION_PENDING,
    INCOMPLETE,
    REPLY_DONE,
    REPLY_FAILED,
)
from memchat.text import normalize


async def save_assistant_turn(
    session: AsyncSession,
    turn: TurnContext,
    assistant_text: str,
    *,
    completed: bool,
    extraction_state: str = EXTRACTION_PENDING,
) -> Message | None:
    """Insert the reply, roll the summary, count it, update the agent list's preview.

    Without agent, conversation or text nothing is written to the conversation; only the
    preview moves (when there is an agent). Returns the stored assistant message.
    """
    message = normalize(assistant_text)
    now = now_ms()
    if turn.agent_id is None or turn.conversation_id is None or message is None:
        if turn.agent_id is not None and message is not None:
            await set_latest_message(session, agent_id=turn.agent_id, text=message, now_ms=now)
        if turn.user_message_id is not None:
            await conversations.set_message_fields(
                session, turn.user_message_id, reply_state=REPLY_FAILED, updated_at_ms=now
            )
        return None

    assistant = await conversations.insert_message(
        session,
        Message(
            conversation_id=turn.conversation_id,
            user_id=turn.user_id,
            agent_id=turn.agent_id,
            role="assistant",
            content=message,
            status=COMPLETED if completed else INCOMPLETE,
            reply_to_id=turn.user_message_id,
            extraction_state=extraction_state,
            created_at_ms=now,
            updated_at_ms=now,
        ),
    )
    summary = build_conversation_summary(turn.previous_summary, turn.recent, turn.user_text, message)
    await conversations.bump_conversation(
        session, turn.conversation_id, count_delta=1, now_ms=now, summary=summary, set_summary=True
    )
    await set_latest_message(session, agent_id=turn.agent_id, text=message, now_ms=now)
    if turn.user_message_id is not None:
        await conversations.set_message_fields(session, turn.user_message_id, reply_state=REPLY_DONE, updated_at_ms=now)
    return assistant
