from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.auth import repository
from memchat.errors import Conflict, TooManyRequests, Unauthorized
from memchat.models import User
from memchat.security import TokenCodec, hash_password, verify_password
from memchat.throttle import LoginGuard


def normalize_email(email: str) -> str:
    return email.strip().lower()


async def create_user(session: AsyncSession, *, email: str, password: str, display_name: str | None) -> User:
    email = normalize_email(email)
    if await repository.get_user_by_email(session, email) is not None:
        raise Conflict("an account with this email already exists", code="email_taken")
    try:
        async with session.begin_nested():
            return await repository.insert_user(
                session, email=email, password_hash=await hash_password(password), display_name=display_name
            )
    except IntegrityError as exc:  # a concurrent signup won the unique index
        raise Conflict("an account with this email already exists", code="email_taken") from exc


async def authenticate(session: AsyncSession, throttle: LoginGuard, *, email: str, password: str) -> User:
    """One answer for unknown email and wrong password, with the same argon2 cost for both."""
    email = normalize_email(email)
    wait_s = await throttle.retry_after_s(email)
    if wait_s > 0:
        raise TooManyRequests(
            "too many failed logins; try again later", code="login_throttled", headers={"Retry-After": str(wait_s)}
        )
    user = await repository.get_user_by_email(session, email)
    if not await verify_password(user.password_hash if user else None, password) or user is None:
        await throttle.record_failure(email)
        raise Unauthorized("wrong email or password", code="invalid_credentials")
    await throttle.record_success(email)
    return user


async def user_for_token(session: AsyncSession, codec: TokenCodec, token: str) -> User:
    user = await repository.get_user(session, codec.user_id(token))
    if user is None:
        raise Unauthorized("invalid token", code="invalid_token")
    return user
