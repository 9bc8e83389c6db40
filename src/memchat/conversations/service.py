from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.service import require_agent
from memchat.clock import now_ms
from memchat.conversations import messages, repository
from memchat.conversations.schemas import ConversationOut, MessageOut, MessagePage, TextPart
from memchat.errors import NotFound
from memchat.models import Conversation, Message


def message_out(message: Message) -> MessageOut:
    return MessageOut(
        id=message.id,
        role=message.role,
        parts=[TextPart(text=message.content)],
        status=message.status,
        created_at_ms=message.created_at_ms,
    )


async def default_conversation(session: AsyncSession, user_id: str, agent_id: str) -> Conversation:
    await require_agent(session, user_id, agent_id)
    return await repository.get_or_create_default_conversation(
        session, user_id=user_id, agent_id=agent_id, now_ms=now_ms()
    )


async def get_conversation_out(session: AsyncSession, user_id: str, agent_id: str) -> ConversationOut:
    return ConversationOut.model_validate(await default_conversation(session, user_id, agent_id))


async def history(
    session: AsyncSession, user_id: str, agent_id: str, *, limit: int, before: str | None, include_superseded: bool
) -> MessagePage:
    await require_agent(session, user_id, agent_id)
    conversation = await repository.get_default_conversation(session, user_id, agent_id)
    if conversation is None:
        if before is not None:
            raise NotFound("message not found", code="message_not_found")
        return MessagePage(messages=[], has_more=False)
    before_seq = None
    if before is not None:
        anchor = await messages.get_message(session, conversation.id, before)
        if anchor is None:
            raise NotFound("message not found", code="message_not_found")
        before_seq = anchor.seq
    rows, has_more = await messages.history_page(
        session, conversation.id, limit=limit, before_seq=before_seq, include_superseded=include_superseded
    )
    return MessagePage(messages=[message_out(m) for m in rows], has_more=has_more)
