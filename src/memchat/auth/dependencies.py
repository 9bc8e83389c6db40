"""The bearer-token dependencies: who is asking."""

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memchat.api_keys.service import is_api_key, user_for_key, user_id_for_key
from memchat.auth.service import user_for_token
from memchat.background import BackgroundTasks
from memchat.db.engine import Database
from memchat.deps import Background, Db, Tokens
from memchat.errors import Forbidden, Unauthorized
from memchat.models import User
from memchat.security import TokenCodec

_bearer = HTTPBearer(
    auto_error=False, description="Authorization: Bearer <token from /api/auth/login, or an API key from /api/keys>"
)


async def _bearer_token(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Unauthorized("missing bearer token", code="missing_token")
    return credentials.credentials


BearerToken = Annotated[str, Depends(_bearer_token)]


async def authenticate_bearer(db: Database, tokens: TokenCodec, background: BackgroundTasks, token: str) -> User:
    """The user of a login token or an API key, both checked against the database (a deleted user's
    token, a revoked key: 401). Also what /mcp authenticates with."""
    if is_api_key(token):
        return await user_for_key(db, background, token)
    async with db.read() as session:
        return await user_for_token(session, tokens, token)


async def _current_user(db: Db, tokens: Tokens, background: Background, token: BearerToken) -> User:
    return await authenticate_bearer(db, tokens, background, token)


CurrentUser = Annotated[User, Depends(_current_user)]


async def _login_user(db: Db, tokens: Tokens, background: Background, token: BearerToken) -> User:
    """The user of a login token; an API key is refused (403 `login_required`). A key is for data
    access: the account itself (its password, its deletion, its export) and making keys need a login."""
    user = await authenticate_bearer(db, tokens, background, token)  # a revoked key is still a 401
    if is_api_key(token):
        raise Forbidden("this needs a login token, not an API key", code="login_required")
    return user


LoginUser = Annotated[User, Depends(_login_user)]


async def _token_user_id(db: Db, tokens: Tokens, background: Background, token: BearerToken) -> str:
    """The token's user id. A login token is verified by signature only: the chat turn checks the
    user, and that the token is from after the last password change, in its own transaction (the
    TokenSubject carries the issue time there), saving a transaction per turn. An API key is looked
    up (one indexed read), so a revoked key is refused at once."""
    if is_api_key(token):
        return await user_id_for_key(db, background, token)
    return tokens.subject(token)


TokenUserId = Annotated[str, Depends(_token_user_id)]
