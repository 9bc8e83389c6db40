from typing import Annotated

from fastapi import APIRouter, Query, Response

from memchat.auth.dependencies import CurrentUser
from memchat.conversations import service
from memchat.conversations.schemas import (
    ConversationCreate,
    ConversationList,
    ConversationOut,
    ConversationPatch,
    MessagePage,
)
from memchat.deps import ReadSession, WriteSession

router = APIRouter(tags=["conversations"])

Limit = Annotated[int, Query(ge=1, le=200)]
Before = Annotated[str | None, Query(max_length=200, description="a message id: the page before it")]
IncludeSuperseded = Annotated[bool, Query(alias="includeSuperseded")]


@router.get("/api/agents/{agent_id}/conversation")
async def get_conversation(agent_id: str, user: CurrentUser, session: WriteSession) -> ConversationOut:
    # A write session: the default conversation is created on first use.
    return await service.get_conversation_out(session, user.id, agent_id)


@router.get("/api/agents/{agent_id}/messages")
async def list_messages(
    agent_id: str,
    user: CurrentUser,
    session: ReadSession,
    limit: Limit = 50,
    before: Before = None,
    include_superseded: IncludeSuperseded = False,
) -> MessagePage:
    return await service.history(
        session, user.id, agent_id, limit=limit, before=before, include_superseded=include_superseded
    )


@router.get("/api/agents/{agent_id}/conversations")
async def list_conversations(agent_id: str, user: CurrentUser, session: WriteSession) -> ConversationList:
    """The agent's conversations, the most recently active first; the default one always among them."""
    return await service.list_conversations(session, user.id, agent_id)


@router.post("/api/agents/{agent_id}/conversations", status_code=201)
async def create_conversation(
    agent_id: str, body: ConversationCreate, user: CurrentUser, session: WriteSession
) -> ConversationOut:
    """A new, empty conversation with the agent: chat in it with `conversationId` in /api/chat."""
    return await service.create_conversation(session, user.id, agent_id, body)


@router.get("/api/conversations/{conversation_id}")
async def get_conversation_by_id(conversation_id: str, user: CurrentUser, session: ReadSession) -> ConversationOut:
    return ConversationOut.model_validate(await service.require_conversation(session, user.id, conversation_id))


@router.patch("/api/conversations/{conversation_id}")
async def rename_conversation(
    conversation_id: str, body: ConversationPatch, user: CurrentUser, session: WriteSession
) -> ConversationOut:
    return await service.rename_conversation(session, user.id, conversation_id, body)


@router.delete("/api/conversations/{conversation_id}", status_code=204)
async def delete_conversation(conversation_id: str, user: CurrentUser, session: WriteSession) -> Response:
    """The conversation and its messages; the agent's memories stay. 409 while a reply in it streams."""
    await service.delete_conversation(session, user.id, conversation_id)
    return Response(status_code=204)


@router.get("/api/conversations/{conversation_id}/messages")
async def list_conversation_messages(
    conversation_id: str,
    user: CurrentUser,
    session: ReadSession,
    limit: Limit = 50,
    before: Before = None,
    include_superseded: IncludeSuperseded = False,
) -> MessagePage:
    return await service.conversation_history(
        session, user.id, conversation_id, limit=limit, before=before, include_superseded=include_superseded
    )
