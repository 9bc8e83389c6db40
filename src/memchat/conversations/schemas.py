from typing import Literal

from memchat.schemas import CamelModel, ConversationOut

__all__ = ["ConversationOut", "MessageOut", "MessagePage", "TextPart"]


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
