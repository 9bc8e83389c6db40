from typing import Literal

from memchat.schemas import CamelModel


class ConversationOut(CamelModel):
    id: str
    agent_id: str
    summary: str | None
    message_count: int
    last_message_at_ms: int | None
    created_at_ms: int


class TextPart(CamelModel):
    type: Literal["text"] = "text"
    text: str


class MessageOut(CamelModel):
    """A stored message in the UIMessage shape that useChat({messages}) takes."""

    id: str
    role: Literal["user", "assistant"]
    parts: list[TextPart]
    status: str
    created_at_ms: int


class MessagePage(CamelModel):
    messages: list[MessageOut]
    has_more: bool
