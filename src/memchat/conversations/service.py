from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.service import require_agent
from memchat.clock import now_ms
from memchat.conversations import messages, repository
from memchat.conversations.schemas import (
    ConversationCreate,
    ConversationList,
    ConversationOut,
    ConversationPatch,
    FilePart,
    MessageOut,
    MessagePage,
    MessagePart,
    ReasoningPart,
    TextPart,
)
from memchat.errors import Conflict, NotFound
from memchat.files.pictures import file_url
from memchat.files.repository import PictureInfo, picture_infos
from memchat.models import Conversation, Message
from memchat.models.message import REPLY_INTERRUPTED, REPLY_PENDING


def message_out(message: Message, pictures: list[PictureInfo] | None = None) -> MessageOut:
    parts: list[MessagePart] = [TextPart(text=message.content)]
    if message.reasoning:
        parts.insert(0, ReasoningPart(text=message.reasoning))
    parts += [FilePart(media_type=p.media_type, url=file_url(p.id)) for p in pictures or []]
    return MessageOut(
        id=message.id,
        role=message.role,
        parts=parts,
        status=message.status,
        created_at_ms=message.created_at_ms,
        extraction_state=message.extraction_state if message.role == "assistant" else None,
        reply_state=_reply_state(message) if message.role == "user" else None,
    )


def _reply_state(message: Message) -> str | None:
    """A pending turn whose lease ran out is interrupted, as the next turn's sweep will mark it."""
    if message.reply_state == REPLY_PENDING and not messages.turn_is_live(message, now_ms()):
        return REPLY_INTERRUPTED
    return message.reply_state


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
    return await _page(session, conversation, limit=limit, before=before, include_superseded=include_superseded)


async def conversation_history(
    session: AsyncSession,
    user_id: str,
    conversation_id: str,
    *,
    limit: int,
    before: str | None,
    include_superseded: bool,
) -> MessagePage:
    conversation = await require_conversation(session, user_id, conversation_id)
    return await _page(session, conversation, limit=limit, before=before, include_superseded=include_superseded)


async def _page(
    session: AsyncSession, conversation: Conversation, *, limit: int, before: str | None, include_superseded: bool
) -> MessagePage:
    before_seq = None
    if before is not None:
        anchor = await messages.get_message(session, conversation.id, before)
        if anchor is None:
            raise NotFound("message not found", code="message_not_found")
        before_seq = anchor.seq
    rows, has_more = await messages.history_page(
        session, conversation.id, limit=limit, before_seq=before_seq, include_superseded=include_superseded
    )
    pictures = await picture_infos(session, [m.id for m in rows if m.role == "user"])
    return MessagePage(messages=[message_out(m, pictures.get(m.id)) for m in rows], has_more=has_more)


async def require_conversation(session: AsyncSession, user_id: str, conversation_id: str) -> Conversation:
    """The user's conversation; someone else's is not found, like an unknown id."""
    conversation = await repository.users_conversation(session, user_id, conversation_id)
    if conversation is None:
        raise NotFound("conversation not found", code="conversation_not_found")
    return conversation


async def list_conversations(session: AsyncSession, user_id: str, agent_id: str) -> ConversationList:
    # The default conversation is always listed, made on first use as GET .../conversation does.
    await default_conversation(session, user_id, agent_id)
    rows = await repository.list_conversations(session, user_id, agent_id)
    return ConversationList(conversations=[ConversationOut.model_validate(c) for c in rows])


async def create_conversation(
    session: AsyncSession, user_id: str, agent_id: str, body: ConversationCreate
) -> ConversationOut:
    await require_agent(session, user_id, agent_id)
    created = await repository.create_conversation(
        session, user_id=user_id, agent_id=agent_id, title=body.title, now_ms=now_ms()
    )
    return ConversationOut.model_validate(created)


async def rename_conversation(
    session: AsyncSession, user_id: str, conversation_id: str, body: ConversationPatch
) -> ConversationOut:
    conversation = await require_conversation(session, user_id, conversation_id)
    conversation.title = body.title
    conversation.updated_at_ms = now_ms()
    await session.flush()
    return ConversationOut.model_validate(conversation)


async def delete_conversation(session: AsyncSession, user_id: str, conversation_id: str) -> None:
    """Deletes the conversation and its messages; the agent's memories stay. Refused while a reply
    in it is being written (its save would have nowhere to go)."""
    conversation = await require_conversation(session, user_id, conversation_id)
    at, conversation_id = now_ms(), conversation.id
    live = await session.run_sync(
        lambda sync: messages.live_turn_in_conversation(sync.connection(), conversation_id, at)
    )
    if live:
        raise Conflict("a reply in this conversation is still being written", code="turn_in_progress")
    await repository.delete_conversation(session, conversation.id)
