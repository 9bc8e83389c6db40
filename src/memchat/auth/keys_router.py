from fastapi import APIRouter, status
from starlette.responses import Response

from memchat.api_keys import service as keys
from memchat.api_keys.schemas import ApiKeyCreate, ApiKeyCreated, ApiKeyList
from memchat.auth.dependencies import CurrentUser, LoginUser
from memchat.deps import ReadSession, WriteSession
from memchat.schemas import ErrorBody

router = APIRouter(tags=["api keys"])


@router.post(
    "/api/keys",
    status_code=status.HTTP_201_CREATED,
    responses={403: {"model": ErrorBody, "description": "`login_required`: asked with an API key, not a login token"}},
)
async def create_key(body: ApiKeyCreate, user: LoginUser, session: WriteSession) -> ApiKeyCreated:
    """A new API key: use it as `Authorization: Bearer <key>` wherever a login token works
    (REST, `/v1`, `/mcp`). The key is in this response only; it is stored hashed.

    Only a login token may create keys: a leaked key cannot mint others that outlive its revocation.
    """
    return await keys.create_key(session, user.id, body.name)


@router.get("/api/keys")
async def list_keys(user: CurrentUser, session: ReadSession) -> ApiKeyList:
    """The user's API keys, newest first, each with its prefix (never the key)."""
    return await keys.list_keys(session, user.id)


@router.delete(
    "/api/keys/{key_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={404: {"model": ErrorBody, "description": "`api_key_not_found`: no such key of this user"}},
)
async def delete_key(key_id: str, user: CurrentUser, session: WriteSession) -> Response:
    """Revoke the key: every instance refuses it (401) from the next request on."""
    await keys.delete_key(session, user.id, key_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
