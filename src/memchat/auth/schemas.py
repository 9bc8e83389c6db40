from pydantic import Field

from memchat.schemas import CamelModel


class SignupRequest(CamelModel):
    email: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    password: str = Field(min_length=8, max_length=1024)
    display_name: str | None = Field(default=None, max_length=200)


class LoginRequest(CamelModel):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=1024)


class UserOut(CamelModel):
    id: str
    email: str
    display_name: str | None
    created_at_ms: int


class AuthResponse(CamelModel):
    token: str
    user: UserOut


__all__ = ["AuthResponse", "LoginRequest", "SignupRequest", "UserOut"]
