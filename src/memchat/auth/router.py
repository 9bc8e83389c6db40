from fastapi import APIRouter, status
from starlette.responses import Response

from memchat.auth import service
from memchat.auth.dependencies import CurrentUser, LoginUser
from memchat.auth.schemas import (
    AccountExport,
    AuthResponse,
    LoginRequest,
    PasswordChangeRequest,
    SignupRequest,
    UserOut,
)
from memchat.deps import PasswordHashing, ReadSession, Throttle, Tokens, WriteSession
from memchat.schemas import ErrorBody

router = APIRouter(tags=["auth"])


@router.post("/api/auth/signup", status_code=status.HTTP_201_CREATED)
async def signup(
    body: SignupRequest, session: WriteSession, tokens: Tokens, passwords: PasswordHashing
) -> AuthResponse:
    user = await service.create_user(
        session, passwords, email=body.email, password=body.password, display_name=body.display_name
    )
    return AuthResponse(token=tokens.issue(user.id), user=UserOut.model_validate(user))


@router.post("/api/auth/login")
async def login(
    body: LoginRequest, session: ReadSession, tokens: Tokens, throttle: Throttle, passwords: PasswordHashing
) -> AuthResponse:
    user = await service.authenticate(session, throttle, passwords, email=body.email, password=body.password)
    return AuthResponse(token=tokens.issue(user.id), user=UserOut.model_validate(user))


@router.get("/api/me")
async def me(user: CurrentUser) -> UserOut:
    return UserOut.model_validate(user)


@router.post(
    "/api/me/password",
    responses={
        403: {
            "model": ErrorBody,
            "description": "`wrong_password`: the current password is wrong; `login_required`: asked with an API key",
        },
        429: {"model": ErrorBody, "description": "`login_throttled`: too many wrong passwords; see Retry-After"},
    },
)
async def change_password(
    body: PasswordChangeRequest,
    user: LoginUser,
    session: WriteSession,
    throttle: Throttle,
    tokens: Tokens,
    passwords: PasswordHashing,
) -> AuthResponse:
    """Set a new password (8 to 1024 characters, as at sign-up), given the current one.

    Wrong current passwords count as failed logins of the account. Every login token issued before
    is refused from now on (401 `token_revoked`), on every instance; the answer carries a fresh one,
    as login does, for the client that changed it. API keys stay valid.
    """
    valid_from_ms = await service.change_password(
        session, throttle, passwords, user, current_password=body.current_password, new_password=body.new_password
    )
    return AuthResponse(token=tokens.issue(user.id, issued_at_ms=valid_from_ms), user=UserOut.model_validate(user))


_LOGIN_ONLY: dict[int | str, dict[str, object]] = {
    403: {"model": ErrorBody, "description": "`login_required`: asked with an API key, not a login token"}
}


@router.delete("/api/me", status_code=status.HTTP_204_NO_CONTENT, responses=_LOGIN_ONLY)
async def delete_me(user: LoginUser, session: WriteSession) -> Response:
    """Delete the account and everything of it: agents, conversations, messages, memories and their
    history. Its tokens are refused (401) from then on. Needs a login token: an API key is for data
    access, and cannot end the account that owns it."""
    await service.delete_user(session, user.id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/api/me/export", responses=_LOGIN_ONLY)
async def export_me(user: LoginUser, session: ReadSession) -> AccountExport:
    """Everything stored for the account, as JSON: the user, agents, conversations, every message
    (superseded ones too, see `status`), memories (archived ones too) with their history events, and
    API keys (names and prefixes, never the keys). Needs a login token: the whole account in one
    answer is not for a key, which reads the account one route at a time."""
    return await service.export_account(session, user)
