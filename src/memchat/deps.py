"""FastAPI dependencies: app state, the request's DB session (it owns the commit), the current user."""

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.auth.service import user_for_token
from memchat.errors import Unauthorized
from memchat.models import User
from memchat.state import AppState


async def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.memchat
    return state


State = Annotated[AppState, Depends(get_state)]


async def _read_session(state: State) -> AsyncIterator[AsyncSession]:
    async with state.db.read() as session:
        yield session


async def _write_session(state: State) -> AsyncIterator[AsyncSession]:
    # Commits when the route returns, before the response is sent (scope="function").
    async with state.db.write() as session:
        yield session


ReadSession = Annotated[AsyncSession, Depends(_read_session, scope="function")]
WriteSession = Annotated[AsyncSession, Depends(_write_session, scope="function")]

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <token from /api/auth/login>")


async def _bearer_token(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Unauthorized("missing bearer token", code="missing_token")
    return credentials.credentials


BearerToken = Annotated[str, Depends(_bearer_token)]


async def _current_user(state: State, token: BearerToken) -> User:
    async with state.db.read() as session:
        return await user_for_token(session, state.tokens, token)


CurrentUser = Annotated[User, Depends(_current_user)]


async def _token_user_id(state: State, token: BearerToken) -> str:
    """The token's user id, verified by signature only: the chat turn checks the user in its own
    transaction (an agent found by (id, user_id) proves it), saving a transaction per turn."""
    return state.tokens.user_id(token)


TokenUserId = Annotated[str, Depends(_token_user_id)]
