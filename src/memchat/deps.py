"""FastAPI dependencies every domain shares: settings, the database and the request's session (it owns the commit).

They read the parts of memchat.app.AppState from `app.state.memchat` by name, typed by the part,
so that no domain package imports the whole app state.
"""

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.background import BackgroundTasks
from memchat.db.engine import Database
from memchat.limits.throttle import LoginGuard
from memchat.security import Passwords, TokenCodec
from memchat.settings import Settings

T = TypeVar("T")


def _part(name: str, kind: type[T]) -> Callable[[Request], Awaitable[T]]:
    """A dependency that returns one part of the app state, typed as `kind`."""

    async def dependency(request: Request) -> T:
        part: T = getattr(request.app.state.memchat, name)
        return part

    dependency.__name__ = f"get_{name}"
    return dependency


AppSettings = Annotated[Settings, Depends(_part("settings", Settings))]
Db = Annotated[Database, Depends(_part("db", Database))]
Tokens = Annotated[TokenCodec, Depends(_part("tokens", TokenCodec))]
Throttle = Annotated[LoginGuard, Depends(_part("login_throttle", LoginGuard))]
PasswordHashing = Annotated[Passwords, Depends(_part("passwords", Passwords))]
Background = Annotated[BackgroundTasks, Depends(_part("background", BackgroundTasks))]


async def _read_session(db: Db) -> AsyncIterator[AsyncSession]:
    async with db.read() as session:
        yield session


async def _write_session(db: Db) -> AsyncIterator[AsyncSession]:
    # Commits when the route returns, before the response is sent (scope="function").
    async with db.write() as session:
        yield session


ReadSession = Annotated[AsyncSession, Depends(_read_session, scope="function")]
WriteSession = Annotated[AsyncSession, Depends(_write_session, scope="function")]
