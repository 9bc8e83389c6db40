"""The chat routes: one turn (chat.turn) under each wire format, and resume and stop of a live turn."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Request
from starlette.responses import Response

from memchat.agents.repository import get_agent
from memchat.auth.dependencies import CurrentUser, TokenUserId
from memchat.chat.admission import setup_done
from memchat.chat.encoders import PLAIN_TEXT, TurnEncoder
from memchat.chat.schemas import ChatRequest
from memchat.chat.services import ChatServices
from memchat.chat.turn import run_chat_turn
from memchat.chat.ui_stream import DONE, MEDIA_TYPE, UI_MESSAGE_STREAM, UI_STREAM_HEADERS, error_parts
from memchat.clock import now_ms
from memchat.conversations.messages import release_turns
from memchat.conversations.repository import get_default_conversation, users_conversation
from memchat.errors import NotFound, UpstreamError
from memchat.schemas import ErrorBody, sse_content

router = APIRouter(tags=["chat"])


async def _services(request: Request) -> ChatServices:
    services: ChatServices = request.app.state.memchat.chat
    return services


Services = Annotated[ChatServices, Depends(_services)]
IdempotencyKey = Annotated[str | None, Header(max_length=200)]
ChatId = Annotated[
    str,
    Path(
        max_length=200,
        description="the id useChat sends: the agent's id for its default conversation, or a conversation's id",
    ),
]
_UPSTREAM_ERRORS: dict[int | str, dict[str, Any]] = {
    502: {"model": ErrorBody, "description": "the upstream LLM failed before any text"},
    503: {"model": ErrorBody, "description": "the upstream is rate limited or the local model is not ready"},
    504: {"model": ErrorBody, "description": "the upstream timed out"},
}
_UI_STREAM = {"content": sse_content("one UI message stream part as JSON, or [DONE] at the end")}


@router.post(
    "/api/chat",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}, "description": "the reply, as plain text"},
        **_UPSTREAM_ERRORS,
    },
)
async def chat(
    request: Request,
    body: ChatRequest,
    user_id: TokenUserId,
    services: Services,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """The turn as the seed's plain text stream (the AI SDK's TextStreamChatTransport)."""
    return await run_chat_turn(services, user_id, body, idempotency_key, setup_done=setup_done(request))


@router.post(
    "/api/ui/chat",
    response_class=Response,
    responses={200: {**_UI_STREAM, "description": "the reply as the AI SDK's UI message stream (SSE)"}},
)
async def ui_chat(
    request: Request,
    body: ChatRequest,
    user_id: TokenUserId,
    services: Services,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """The turn as the AI SDK's UI message stream (DefaultChatTransport). An upstream failure before
    any text is an `error` part (the user message stays stored), not an HTTP error."""
    try:
        return await run_chat_turn(
            services, user_id, body, idempotency_key, setup_done=setup_done(request), encoder=UI_MESSAGE_STREAM
        )
    except UpstreamError as exc:
        return Response(error_parts(exc.code, exc.message) + DONE, media_type=MEDIA_TYPE, headers=UI_STREAM_HEADERS)


async def _conversation_of_chat(services: ChatServices, user_id: str, chat_id: str) -> str | None:
    """The conversation a chat id names: a conversation of the user's, or an agent's default one."""
    async with services.db.read() as session:
        conversation = await users_conversation(session, user_id, chat_id)
        if conversation is not None:
            return conversation.id
        if await get_agent(session, user_id, chat_id) is None:
            raise NotFound("no such chat", code="chat_not_found")
        default = await get_default_conversation(session, user_id, chat_id)
        return default.id if default is not None else None


async def _resume(services: ChatServices, user_id: str, chat_id: str, encoder: TurnEncoder) -> Response:
    conversation_id = await _conversation_of_chat(services, user_id, chat_id)
    live = await services.streams.follow(conversation_id) if conversation_id is not None else None
    if live is None:
        return Response(status_code=204)
    started, batches = live
    return await encoder.stream(started, batches)


_REDIS_DOWN: dict[int | str, dict[str, Any]] = {
    503: {
        "model": ErrorBody,
        "description": "`redis_unavailable`: Redis cannot be reached; try again after Retry-After",
    }
}
_RESUMED: dict[int | str, dict[str, Any]] = {
    204: {"description": "nothing streams in this chat now"},
    404: {"model": ErrorBody, "description": "no such chat"},
    **_REDIS_DOWN,
}


@router.get(
    "/api/ui/chat/{chat_id}/stream",
    response_class=Response,
    responses={200: {**_UI_STREAM, "description": "the reply that streams now, from its start"}, **_RESUMED},
)
async def resume_ui_chat(chat_id: ChatId, user: CurrentUser, services: Services) -> Response:
    """`useChat({resume: true})`: the reply streaming now in this chat, from its first part, live to
    its end, from whichever instance streams it."""
    return await _resume(services, user.id, chat_id, UI_MESSAGE_STREAM)


@router.get(
    "/api/chat/{chat_id}/stream",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}, "description": "the reply, from its start"},
        **_RESUMED,
    },
)
async def resume_chat(chat_id: ChatId, user: CurrentUser, services: Services) -> Response:
    """The same for the plain text stream."""
    return await _resume(services, user.id, chat_id, PLAIN_TEXT)


@router.post(
    "/api/chat/{chat_id}/stop",
    status_code=204,
    response_class=Response,
    responses={404: {"model": ErrorBody, "description": "no such chat"}, **_REDIS_DOWN},
)
async def stop_chat(chat_id: ChatId, user: CurrentUser, services: Services) -> Response:
    """Stop the reply streaming now in this chat, on any instance: the upstream request ends, the
    text streamed so far is stored with status `stopped`, and every reader's stream ends cleanly.
    Answers once the reply is stored; 204 also when nothing streams.

    A turn whose owner the stop does not reach (it stalled past its liveness, or the turn started
    while Redis was down), or whose owner stores nothing within the stop's wait, is taken from it in
    the database: it becomes interrupted, nothing of it is stored when its owner wakes (that stream
    ends as failed), and a retry answers it again."""
    conversation_id = await _conversation_of_chat(services, user.id, chat_id)
    if conversation_id is not None and not await services.streams.stop(conversation_id):
        await services.db.run_write(release_turns, conversation_id, now_ms())
    return Response(status_code=204)
