"""The bearer-token dependencies: who is asking."""

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memchat.auth.service import user_for_token
from memchat.deps import Db, Tokens
from memchat.errors import Unauthorized
from memchat.models import User

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <token from /api/auth/login>")


async def _bearer_token(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Unauthorized("missing bearer token", code="missing_token")
    return credentials.credentials


BearerToken = Annotated[str, Depends(_bearer_token)]


async def _current_user(db: Db, tokens: Tokens, token: BearerToken) -> User:
    async with db.read() as session:
        return await user_for_token(session, tokens, token)


CurrentUser = Annotated[User, Depends(_current_user)]


async def _token_user_id(tokens: Tokens, token: BearerToken) -> str:
    """The token's user id, verified by signature only: the chat turn checks the user in its own
    transaction (an agent found by (id, user_id) proves it), saving a transaction per turn."""
    return tokens.user_id(token)


TokenUserId = Annotated[str, Depends(_token_user_id)]
