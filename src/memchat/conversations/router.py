from typing import Annotated

from fastapi import APIRouter, Query

from memchat.auth.dependencies import CurrentUser
from memchat.conversations import service
from memchat.conversations.schemas import ConversationOut, MessagePage
from memchat.deps import ReadSession, WriteSession

router = APIRouter(tags=["conversations"])


@router.get("/api/agents/{agent_id}/conversation")
async def get_conversation(agent_id: str, user: CurrentUser, session: WriteSession) -> ConversationOut:
    # A write session: the default conversation is created on first use.
    return await service.get_conversation_out(session, user.id, agent_id)


@router.get("/api/agents/{agent_id}/messages")
async def list_messages(
    agent_id: str,
    user: CurrentUser,
    session: ReadSession,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before: Annotated[str | None, Query(max_length=200, description="a message id: the page before it")] = None,
    include_superseded: Annotated[bool, Query(alias="includeSuperseded")] = False,
) -> MessagePage:
    return await service.history(
        session, user.id, agent_id, limit=limit, before=before, include_superseded=include_superseded
    )
