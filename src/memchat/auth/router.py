from fastapi import APIRouter, status

from memchat.auth import service
from memchat.auth.schemas import AuthResponse, LoginRequest, SignupRequest, UserOut
from memchat.deps import CurrentUser, ReadSession, State, WriteSession

router = APIRouter(tags=["auth"])


@router.post("/api/auth/signup", status_code=status.HTTP_201_CREATED)
async def signup(body: SignupRequest, session: WriteSession, state: State) -> AuthResponse:
    user = await service.create_user(session, email=body.email, password=body.password, display_name=body.display_name)
    return AuthResponse(token=state.tokens.issue(user.id), user=UserOut.model_validate(user))


@router.post("/api/auth/login")
async def login(body: LoginRequest, session: ReadSession, state: State) -> AuthResponse:
    user = await service.authenticate(session, state.login_throttle, email=body.email, password=body.password)
    return AuthResponse(token=state.tokens.issue(user.id), user=UserOut.model_validate(user))


@router.get("/api/me")
async def me(user: CurrentUser) -> UserOut:
    return UserOut.model_validate(user)
