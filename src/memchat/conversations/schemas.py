from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from memchat.schemas import CamelModel, ConversationOut
from memchat.text import normalize

__all__ = [
    "ConversationCreate",
    "ConversationList",
    "ConversationOut",
    "ConversationPatch",
    "FilePart",
    "MessageOut",
    "MessagePage",
    "TextPart",
]

TITLE_MAX_CHARS = 200


def _title(value: object) -> object:
    # Normalized like every stored text; blank means "no title" (the console names it).
    return normalize(value) if isinstance(value, str) else value


Title = Annotated[Annotated[str, Field(max_length=TITLE_MAX_CHARS)] | None, BeforeValidator(_title)]


class ConversationCreate(CamelModel):
    title: Title = None


class ConversationPatch(CamelModel):
    """`title: null` or blank removes the name."""

    title: Title


class ConversationList(CamelModel):
    conversations: list[ConversationOut]


class TextPart(CamelModel):
    type: Literal["text"] = "text"
    text: str


class ReasoningPart(CamelModel):
    """A reasoning model's thinking before its reply (useChat's reasoning part); never in a prompt."""

    type: Literal["reasoning"] = "reasoning"
    text: str


class FilePart(CamelModel):
    """A picture sent with a user message (useChat's file part); `url` serves it to its owner."""

    type: Literal["file"] = "file"
    media_type: str
    url: str = Field(description="/api/files/{id}: the picture, with the same Authorization as this request")


MessagePart = Annotated[ReasoningPart | TextPart | FilePart, Field(discriminator="type")]


class MessageOut(CamelModel):
    """A stored message in the UIMessage shape that useChat({messages}) takes."""

    id: str
    role: Literal["user", "assistant"]
    parts: list[MessagePart]
    status: str
    created_at_ms: int
    extraction_state: Literal["pending", "done"] | None = Field(
        default=None,
        description="assistant messages: the turn's memory extraction, pending until its memories are stored",
    )
    reply_state: Literal["pending", "done", "failed", "interrupted"] | None = Field(
        default=None,
        description="user messages: the turn it opened; pending while its reply is being answered "
        "(`GET /api/ui/chat/{chatId}/stream` follows it), failed when the model gave no text, interrupted "
        "when the server stopped mid-turn",
    )


class MessagePage(CamelModel):
    messages: list[MessageOut]
    has_more: bool
