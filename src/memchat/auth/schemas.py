from typing import Annotated, Any, Literal

from pydantic import Field

from memchat.api_keys.schemas import ApiKeyOut
from memchat.schemas import AgentProfile, CamelModel, ConversationOut

# What sign-up takes, and so what every other way to set an email or a password takes (the
# password change, `memchat user create` and `memchat user passwd`).
Email = Annotated[str, Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")]
NewPassword = Annotated[str, Field(min_length=8, max_length=1024)]


class SignupRequest(CamelModel):
    email: Email
    password: NewPassword
    display_name: str | None = Field(default=None, max_length=200)


class LoginRequest(CamelModel):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=1024)


class PasswordChangeRequest(CamelModel):
    current_password: str = Field(min_length=1, max_length=1024)
    new_password: NewPassword


class PasswordReset(CamelModel):
    """A new password set without the old one (`memchat user passwd`)."""

    password: NewPassword


class UserOut(CamelModel):
    id: str
    email: str
    display_name: str | None
    created_at_ms: int


class AuthResponse(CamelModel):
    token: str
    user: UserOut


# GET /api/me/export: what is stored for the user, row by row. Enumerations are plain strings
# here, so that an export never fails on a stored value.


class ExportedAgent(CamelModel):
    id: str
    name: str
    handle: str
    default_prompt: str | None
    profile: AgentProfile
    created_at_ms: int
    updated_at_ms: int


class ExportedConversation(ConversationOut):
    updated_at_ms: int


class ExportedFile(CamelModel):
    """A picture sent with a user message, whole: a file part that POST .../import takes back."""

    id: str
    type: Literal["file"] = "file"
    media_type: str
    url: str = Field(description="the picture as a base64 data URL")


class ExportedMessage(CamelModel):
    """Every stored message, also those superseded by a regenerate or an edit (see `status`)."""

    id: str
    conversation_id: str
    agent_id: str
    role: str
    content: str
    reasoning: str | None = Field(default=None, description="a reasoning model's thinking before the reply")
    files: list[ExportedFile] = Field(default_factory=list, description="the pictures sent with a user message")
    status: str
    client_message_id: str | None
    reply_to_id: str | None
    created_at_ms: int
    updated_at_ms: int


class ExportedMemoryEvent(CamelModel):
    """One change to a memory, with the memory's state before and after (null: it did not exist)."""

    id: str
    kind: str
    actor: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source_message_id: str | None
    created_at_ms: int


class ExportedMemory(CamelModel):
    id: str
    agent_id: str
    type: str
    content: str
    importance: int
    status: str
    source_message_id: str | None
    created_at_ms: int
    updated_at_ms: int
    events: list[ExportedMemoryEvent]


class AccountExport(CamelModel):
    exported_at_ms: int
    user: UserOut
    agents: list[ExportedAgent]
    conversations: list[ExportedConversation]
    messages: list[ExportedMessage]
    memories: list[ExportedMemory]
    api_keys: list[ApiKeyOut] = Field(description="the account's API keys: names and prefixes, never the keys")


__all__ = [
    "AccountExport",
    "AuthResponse",
    "Email",
    "ExportedAgent",
    "ExportedConversation",
    "ExportedFile",
    "ExportedMemory",
    "ExportedMemoryEvent",
    "ExportedMessage",
    "LoginRequest",
    "NewPassword",
    "PasswordChangeRequest",
    "PasswordReset",
    "SignupRequest",
    "UserOut",
]
