"""From the request body to what the user asks for: a pure TurnIntent, the limits applied."""

from dataclasses import dataclass, field
from typing import Literal

from memchat.chat.schemas import ChatRequest, UIMessage
from memchat.errors import InvalidInput, PayloadTooLarge
from memchat.files.pictures import IncomingPicture, read_picture
from memchat.security import TokenSubject
from memchat.settings import LimitSettings
from memchat.text import normalize

TurnKind = Literal["send", "edit", "regenerate"]


@dataclass(frozen=True)
class TurnIntent:
    user_id: str
    agent_id: str | None  # None: the stateless compatibility path
    conversation_id: str | None
    kind: TurnKind
    text: str | None  # the user's normalized text; None for a regenerate
    client_id: str | None  # Idempotency-Key, else the client's id of the user message
    edited_id: str | None  # the edited message (kind "edit")
    profile_override: dict[str, str] | None  # None: the request had no `conversation` object
    has_user_message: bool
    # The compatibility path's history: the client's messages, as (role, text).
    client_history: list[tuple[str, str]] = field(default_factory=list)
    # When the login token was issued (ms): commit point 1 refuses it if the password changed since.
    # None for an API key (checked when it was looked up).
    token_issued_at_ms: int | None = None
    # the pictures sent with the user message (file parts), checked; stored with it at commit point 1
    pictures: tuple[IncomingPicture, ...] = ()


def read_intent(request: ChatRequest, user_id: str, idempotency_key: str | None, limits: LimitSettings) -> TurnIntent:
    if len(request.messages) > limits.max_messages_per_request:
        raise InvalidInput(f"at most {limits.max_messages_per_request} messages per request", code="too_many_messages")
    for message in request.messages:
        if len(message.text()) > limits.max_message_chars:
            raise PayloadTooLarge(
                f"a message is longer than {limits.max_message_chars} characters", code="message_too_long"
            )
    last_user = request.last_user_message()
    text: str | None = None
    kind: TurnKind = "regenerate"
    pictures: tuple[IncomingPicture, ...] = ()
    if request.trigger != "regenerate-message":
        if last_user is None:
            raise InvalidInput("the request has no user message", code="no_user_message")
        text = normalize(last_user.text())
        if text is None:
            raise InvalidInput("the user message is empty", code="empty_message")
        kind = "edit" if request.message_id else "send"
        if request.agent_id is not None:
            pictures = _read_pictures(last_user, limits)
    return TurnIntent(
        user_id=str(user_id),
        agent_id=request.agent_id,
        conversation_id=request.conversation_id,
        kind=kind,
        text=text,
        client_id=idempotency_key or (last_user.id if last_user is not None else None),
        edited_id=request.message_id if kind == "edit" else None,
        profile_override=request.conversation.fields_set() if request.conversation is not None else None,
        has_user_message=last_user is not None,
        client_history=[(m.role, m.text()) for m in request.messages if m.role != "system"]
        if request.agent_id is None
        else [],
        token_issued_at_ms=user_id.issued_at_ms if isinstance(user_id, TokenSubject) else None,
        pictures=pictures,
    )


def _read_pictures(message: UIMessage, limits: LimitSettings) -> tuple[IncomingPicture, ...]:
    files = message.files()
    if len(files) > limits.max_pictures_per_message:
        raise InvalidInput(f"at most {limits.max_pictures_per_message} pictures per message", code="too_many_pictures")
    return tuple(read_picture(f.media_type, f.url, max_bytes=limits.max_picture_bytes) for f in files)
