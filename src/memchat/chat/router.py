from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request
from starlette.responses import Response

from memchat.auth.dependencies import TokenUserId
from memchat.chat.admission import setup_done
from memchat.chat.schemas import ChatRequest
from memchat.chat.services import ChatServices
from memchat.chat.turn import run_chat_turn
from memchat.schemas import ErrorBody

router = APIRouter(tags=["chat"])


async def _services(request: Request) -> ChatServices:
    services: ChatServices = request.app.state.memchat.chat
    return services


Services = Annotated[ChatServices, Depends(_services)]


@router.post(
    "/api/chat",
    response_class=Response,
    responses={
        200: {
            "content": {"text/plain": {"schema": {"type": "string"}}},
            "description": "the reply, streamed as plain text",
        },
        502: {"model": ErrorBody, "description": "the upstream LLM failed before any text"},
        503: {"model": ErrorBody, "description": "the upstream is rate limited or the local model is not ready"},
        504: {"model": ErrorBody, "description": "the upstream timed out"},
    },
)
async def chat(
    request: Request,
    body: ChatRequest,
    user_id: TokenUserId,
    services: Services,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    return await run_chat_turn(services, user_id, body, idempotency_key, setup_done=setup_done(request))
