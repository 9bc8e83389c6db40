from fastapi import APIRouter, status

from memchat.auth import service
from memchat.auth.dependencies import CurrentUser
from memchat.auth.schemas import AuthResponse, LoginRequest, SignupRequest, UserOut
from memchat.deps import ReadSession, Throttle, Tokens, WriteSession

router = APIRouter(tags=["auth"])


@router.post("/api/auth/signup", status_code=status.HTTP_201_CREATED)
async def signup(body: SignupRequest, session: WriteSession, tokens: Tokens) -> AuthResponse:
    user = await service.create_user(session, email=body.email, password=body.password, display_name=body.display_name)
    return AuthResponse(token=tokens.issue(user.id), user=UserOut.model_validate(user))


@router.post("/api/auth/login")
async def login(body: LoginRequest, session: ReadSession, tokens: Tokens, throttle: Throttle) -> AuthResponse:
    user = await service.authenticate(session, throttle, email=body.email, password=body.password)
    return AuthResponse(token=tokens.issue(user.id), user=UserOut.model_validate(user))


@router.get("/api/me")
async def me(user: CurrentUser) -> UserOut:
    return UserOut.model_validate(user)
