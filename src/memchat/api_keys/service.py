"""API keys: long-lived bearer credentials for scripts, OpenAI-compatible clients and MCP clients.

A key is `mck_` and 32 random bytes (URL-safe base64); only its SHA-256 is stored, so it is shown
once, when created. Every request with a key looks it up in the database (no cache), so a deleted
key is refused at once by every instance. The key's last use is written at most once a minute,
after the response, by a conditional update (a burst of requests, or several instances, write once).
"""

import hashlib
import secrets

from sqlalchemy.ext.asyncio import AsyncSession

from memchat.api_keys import repository
from memchat.api_keys.schemas import ApiKeyCreated, ApiKeyList, ApiKeyOut
from memchat.background import BackgroundTasks
from memchat.clock import now_ms
from memchat.db.engine import Database
from memchat.errors import NotFound, Unauthorized
from memchat.models import User

KEY_PREFIX = "mck_"
_SHOWN_CHARS = 12  # the prefix kept in lists: "mck_" and 8 characters of the key
LAST_USED_EVERY_MS = 60_000

# Keys whose last use is being written by this process, so a burst of requests writes once.
_marking: set[str] = set()


def is_api_key(token: str) -> bool:
    """Keys and our JWTs never look alike: a JWT starts with its base64 header, `eyJ`."""
    return token.startswith(KEY_PREFIX)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


async def create_key(session: AsyncSession, user_id: str, name: str) -> ApiKeyCreated:
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = await repository.insert_key(
        session, user_id=user_id, name=name, prefix=key[:_SHOWN_CHARS], key_hash=hash_key(key), now_ms=now_ms()
    )
    return ApiKeyCreated.model_validate({**ApiKeyOut.model_validate(row).model_dump(), "key": key})


async def list_keys(session: AsyncSession, user_id: str) -> ApiKeyList:
    return ApiKeyList(keys=[ApiKeyOut.model_validate(k) for k in await repository.list_keys(session, user_id)])


async def delete_key(session: AsyncSession, user_id: str, key_id: str) -> None:
    if not await repository.delete_key(session, user_id, key_id):
        raise NotFound("no such API key", code="api_key_not_found")


def _invalid() -> Unauthorized:
    return Unauthorized("invalid API key", code="invalid_api_key")


async def user_for_key(db: Database, background: BackgroundTasks, key: str) -> User:
    """The key's user (REST routes that need the whole user); 401 for an unknown or deleted key."""
    async with db.read() as session:
        found = await repository.user_and_key_by_hash(session, hash_key(key))
    if found is None:
        raise _invalid()
    user: User = found[0]
    _note_use(db, background, found.id, found.last_used_at_ms)
    return user


async def user_id_for_key(db: Database, background: BackgroundTasks, key: str) -> str:
    """The key's user id, looked up by the key's hash (one indexed read); 401 when unknown or deleted."""
    async with db.read() as session:
        found = await repository.key_by_hash(session, hash_key(key))
    if found is None:
        raise _invalid()
    _note_use(db, background, found.id, found.last_used_at_ms)
    user_id: str = found.user_id
    return user_id


def _note_use(db: Database, background: BackgroundTasks, key_id: str, last_used_at_ms: int | None) -> None:
    now = now_ms()
    if last_used_at_ms is not None and now - last_used_at_ms < LAST_USED_EVERY_MS:
        return
    if key_id in _marking:
        return
    _marking.add(key_id)
    background.spawn(_mark_used(db, key_id, now), name=f"api-key-used-{key_id}")


async def _mark_used(db: Database, key_id: str, now: int) -> None:
    try:
        async with db.write() as session:
            await repository.mark_used(session, key_id, now_ms=now, stale_before_ms=now - LAST_USED_EVERY_MS)
    finally:
        _marking.discard(key_id)
