from typing import Annotated

from fastapi import APIRouter, Header, Request
from starlette.responses import Response

from memchat.chat.admission import setup_done
from memchat.chat.schemas import ChatRequest
from memchat.chat.turn import run_chat_turn
from memchat.deps import State, TokenUserId
from memchat.schemas import ErrorBody

router = APIRouter(tags=["chat"])


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
    state: State,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    return await run_chat_turn(state, user_id, body, idempotency_key, setup_done=setup_done(request))
