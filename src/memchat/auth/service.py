import base64
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.api_keys.schemas import ApiKeyOut
from memchat.auth import repository
from memchat.auth.schemas import (
    AccountExport,
    ExportedAgent,
    ExportedConversation,
    ExportedFile,
    ExportedMemory,
    ExportedMemoryEvent,
    ExportedMessage,
    UserOut,
)
from memchat.clock import now_ms
from memchat.errors import Conflict, Forbidden, NotFound, TooManyRequests, Unauthorized
from memchat.limits.throttle import LoginGuard
from memchat.models import User
from memchat.schemas import AgentProfile, CamelModel
from memchat.security import Passwords, TokenCodec, check_token_current

E = TypeVar("E", bound=CamelModel)


def normalize_email(email: str) -> str:
    return email.strip().lower()


async def create_user(
    session: AsyncSession, passwords: Passwords, *, email: str, password: str, display_name: str | None
) -> User:
    email = normalize_email(email)
    if await repository.get_user_by_email(session, email) is not None:
        raise Conflict("an account with this email already exists", code="email_taken")
    try:
        async with session.begin_nested():
            return await repository.insert_user(
                session, email=email, password_hash=await passwords.hash(password), display_name=display_name
            )
    except IntegrityError as exc:  # a concurrent signup won the unique index
        raise Conflict("an account with this email already exists", code="email_taken") from exc


async def _throttled(throttle: LoginGuard, email: str) -> None:
    wait_s = await throttle.retry_after_s(email)
    if wait_s > 0:
        raise TooManyRequests(
            "too many failed logins; try again later", code="login_throttled", headers={"Retry-After": str(wait_s)}
        )


async def authenticate(
    session: AsyncSession, throttle: LoginGuard, passwords: Passwords, *, email: str, password: str
) -> User:
    """One answer for unknown email and wrong password, with the same argon2 cost for both."""
    email = normalize_email(email)
    await _throttled(throttle, email)
    user = await repository.get_user_by_email(session, email)
    if not await passwords.verify(user.password_hash if user else None, password) or user is None:
        await throttle.record_failure(email)
        raise Unauthorized("wrong email or password", code="invalid_credentials")
    await throttle.record_success(email)
    return user


async def user_for_token(session: AsyncSession, codec: TokenCodec, token: str) -> User:
    subject = codec.subject(token)
    user = await repository.get_user(session, str(subject))
    if user is None:
        raise Unauthorized("invalid token", code="invalid_token")
    check_token_current(subject.issued_at_ms, user.tokens_valid_after_ms)
    return user


async def set_password(session: AsyncSession, passwords: Passwords, user_id: str, password: str) -> int:
    """Sets the password and ends every login token issued before now (they are refused with 401
    `token_revoked`); API keys stay. Returns that moment (ms): a token issued at it is valid."""
    password_hash = await passwords.hash(password)
    cutoff = now_ms()
    if not await repository.update_password_hash(session, user_id, password_hash, tokens_valid_after_ms=cutoff):
        raise NotFound("no such user", code="user_not_found")
    return cutoff


async def change_password(
    session: AsyncSession,
    throttle: LoginGuard,
    passwords: Passwords,
    user: User,
    *,
    current_password: str,
    new_password: str,
) -> int:
    """The current password proves it is the user and not only their token; guesses count as
    failed logins (a stolen token must not become a way around the login throttle). Returns the
    moment from which tokens are valid (set_password)."""
    await _throttled(throttle, user.email)
    if not await passwords.verify(user.password_hash, current_password):
        await throttle.record_failure(user.email)
        raise Forbidden("the current password is wrong", code="wrong_password")
    await throttle.record_success(user.email)
    return await set_password(session, passwords, user.id, new_password)


async def delete_user(session: AsyncSession, user_id: str) -> None:
    """The user and everything of theirs: agents, conversations, messages, memories, their history."""
    if not await repository.delete_user(session, user_id):
        raise NotFound("no such user", code="user_not_found")


def _exported(kind: type[E], row: object, **nested: object) -> E:
    """`kind` from a row's columns of the same names, the nested parts given."""
    columns = {name: getattr(row, name) for name in kind.model_fields if name not in nested}
    return kind.model_validate({**columns, **nested})


async def export_account(session: AsyncSession, user: User) -> AccountExport:
    rows = await repository.account_rows(session, user.id)
    events: dict[str, list[ExportedMemoryEvent]] = {}
    for event in rows.memory_events:
        events.setdefault(event.memory_id, []).append(_exported(ExportedMemoryEvent, event))
    files: dict[str, list[ExportedFile]] = {}
    for f in rows.files:
        url = f"data:{f.media_type};base64,{base64.b64encode(f.data).decode('ascii')}"
        exported = ExportedFile(id=f.id, media_type=f.media_type, url=url)
        files.setdefault(f.message_id, []).append(exported)
    return AccountExport(
        exported_at_ms=now_ms(),
        user=UserOut.model_validate(user),
        agents=[_exported(ExportedAgent, a, profile=AgentProfile.model_validate(a)) for a in rows.agents],
        conversations=[_exported(ExportedConversation, c) for c in rows.conversations],
        messages=[_exported(ExportedMessage, m, files=files.get(m.id, [])) for m in rows.messages],
        memories=[_exported(ExportedMemory, m, events=events.get(m.id, [])) for m in rows.memories],
        api_keys=[ApiKeyOut.model_validate(k) for k in rows.api_keys],
    )
