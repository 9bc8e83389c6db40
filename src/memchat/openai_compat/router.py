"""POST /v1/chat/completions and GET /v1/models: memchat as a memory layer for OpenAI clients.

`model` names one of the caller's agents (its id or its handle). The turn is /api/chat's
(chat.turn.run_chat_turn): the last user message of `messages` is stored and answered in the agent's
conversation, and the prompt is built from the server's history, summary and memories; the other
messages of the request are ignored (docs/clients.md says why). Only the wire format differs
(openai_compat.encoder), and errors take OpenAI's shape (openai_compat.errors).
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request
from starlette.responses import Response

from memchat.agents.repository import get_agent, list_agents
from memchat.auth.dependencies import CurrentUser
from memchat.chat.admission import setup_done
from memchat.chat.schemas import ChatRequest, UIMessage, UIPart
from memchat.chat.services import ChatServices
from memchat.chat.turn import run_chat_turn
from memchat.errors import InvalidInput, NotFound
from memchat.models import Agent
from memchat.openai_compat.encoder import OpenAIEncoder
from memchat.openai_compat.schemas import (
    ChatCompletion,
    ChatCompletionRequest,
    InputMessage,
    ModelList,
    ModelOut,
    OpenAIErrorBody,
)
from memchat.schemas import sse_content

router = APIRouter(tags=["openai"])


async def _services(request: Request) -> ChatServices:
    services: ChatServices = request.app.state.memchat.chat
    return services


Services = Annotated[ChatServices, Depends(_services)]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": OpenAIErrorBody, "description": "invalid_request_error: the body is not a valid request"},
    401: {"model": OpenAIErrorBody, "description": "authentication_error: no, a bad or an ended token or key"},
    404: {"model": OpenAIErrorBody, "description": "model_not_found: no agent of the caller has this id or handle"},
    429: {"model": OpenAIErrorBody, "description": "rate_limit_error: too many turns; see Retry-After"},
    502: {"model": OpenAIErrorBody, "description": "server_error: the upstream LLM failed before any text"},
    503: {"model": OpenAIErrorBody, "description": "server_error: the upstream is busy or not ready"},
    504: {"model": OpenAIErrorBody, "description": "server_error: the upstream timed out"},
}


def _handles(handle: str) -> set[str]:
    """`@lin` is also called `lin`, and the other way round."""
    bare = handle.strip().removeprefix("@")
    return {bare, f"@{bare}"} if bare else set()


async def resolve_model(services: ChatServices, user_id: str, model: str) -> Agent:
    """The caller's agent whose id, or else whose handle, `model` is."""
    async with services.db.read() as session:
        agent = await get_agent(session, user_id, model)
        if agent is not None:
            return agent
        named = [a for a, _ in await list_agents(session, user_id) if model in _handles(a.handle)]
    if not named:
        raise NotFound(f"The model `{model}` does not exist or you do not have access to it.", code="model_not_found")
    if len(named) > 1:
        ids = ", ".join(sorted(a.id for a in named))
        raise InvalidInput(
            f"several agents have the handle `{model}`; use one of their ids: {ids}", code="model_ambiguous"
        )
    return named[0]


def _last_user_message(messages: list[InputMessage]) -> InputMessage:
    if messages[-1].role != "user":
        raise InvalidInput(
            f"the last message must be the user's (it is {messages[-1].role!r}): it is the turn's input",
            code="last_message_not_user",
        )
    return messages[-1]


@router.post(
    "/v1/chat/completions",
    response_model=ChatCompletion,
    responses={
        200: {"content": sse_content("with stream: true, one chat.completion.chunk as JSON, or [DONE] at the end")},
        **_ERRORS,
    },
)
async def chat_completions(
    request: Request,
    body: ChatCompletionRequest,
    user: CurrentUser,
    services: Services,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    """A turn with the agent `model`: the last (user) message is its input, the reply OpenAI's chat
    completion, streamed as `chat.completion.chunk` events with `stream: true`. The same
    Idempotency-Key answers a retry with the stored reply instead of a second turn."""
    last = _last_user_message(body.messages)
    agent = await resolve_model(services, user.id, body.model)
    text = last.text()
    turn_request = ChatRequest(
        agent_id=agent.id,
        conversation_id=body.conversation_id,
        # its pictures are the chat's file parts: checked, stored and sent upstream as /api/chat does
        messages=[
            UIMessage(
                role="user",
                parts=[UIPart(type="text", text=text), *(UIPart(type="file", url=url) for url in last.picture_urls())],
            )
        ],
    )
    encoder = OpenAIEncoder(
        model=body.model,
        input_text=text,
        stream_body=bool(body.stream),
        include_usage=bool(body.stream_options and body.stream_options.include_usage),
    )
    return await run_chat_turn(
        services, user.id, turn_request, idempotency_key, setup_done=setup_done(request), encoder=encoder
    )


@router.get("/v1/models", responses={401: _ERRORS[401]})
async def models(user: CurrentUser, services: Services) -> ModelList:
    """The caller's agents, each a model for /v1/chat/completions."""
    async with services.db.read() as session:
        agents = [agent for agent, _ in await list_agents(session, user.id)]
    return ModelList(
        data=[ModelOut(id=a.id, created=a.created_at_ms // 1000, name=a.name, handle=a.handle) for a in agents]
    )
