from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request, Response, status

from memchat.auth.dependencies import CurrentUser
from memchat.chat.services import ChatServices
from memchat.deps import ReadSession
from memchat.imports import service
from memchat.imports.schemas import ImportOut, ImportRequest
from memchat.schemas import ErrorBody

router = APIRouter(tags=["imports"])


async def _services(request: Request) -> ChatServices:
    services: ChatServices = request.app.state.memchat.chat
    return services


Services = Annotated[ChatServices, Depends(_services)]


@router.post(
    "/api/agents/{agent_id}/import",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        200: {"model": ImportOut, "description": "this import was already made: nothing changed"},
        404: {"model": ErrorBody, "description": "no such agent"},
        413: {"model": ErrorBody, "description": "the body is over MEMCHAT_MAX_REQUEST_BYTES"},
        422: {
            "model": ErrorBody,
            "description": "a bad message, nothing to import, or `idempotency_key_reused` (the key was used"
            " for other messages): nothing stored",
        },
    },
)
async def import_conversation(
    agent_id: str,
    body: ImportRequest,
    user: CurrentUser,
    services: Services,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> ImportOut:
    """Store a conversation as the agent's history; memory extraction over it runs in the background
    (poll GET .../imports/{importId}). docs/import.md has the shapes."""
    # The transaction is ours, not a dependency's: the background job starts after the commit.
    async with services.db.write() as session:
        out, created = await service.start_import(session, services, user.id, agent_id, body, idempotency_key)
    if created:
        services.background.spawn(
            service.run_import(services, agent_id, out.conversation_id, out.id), name=f"import-{out.id}"
        )
    else:
        response.status_code = status.HTTP_200_OK
    return out


@router.get("/api/agents/{agent_id}/imports/{import_id}")
async def get_import(agent_id: str, import_id: str, user: CurrentUser, session: ReadSession) -> ImportOut:
    return await service.import_progress(session, user.id, agent_id, import_id)
