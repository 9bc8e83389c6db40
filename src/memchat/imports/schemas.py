"""The import's wire shapes: the history endpoint's messages, or OpenAI-style chat messages."""

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field, field_validator

from memchat.schemas import CamelModel

MAX_IMPORT_MESSAGES = 5000
# 2000-01-01 .. 2100-01-01: a timestamp outside is a mistake (seconds given for milliseconds, say)
MIN_TIMESTAMP_MS = 946_684_800_000
MAX_TIMESTAMP_MS = 4_102_444_800_000


class ImageUrl(CamelModel):
    url: str


class ImportPart(CamelModel):
    """A content part: text is kept, and a user message's pictures: file parts (`mediaType`, `url`:
    a base64 data URL, as the account export writes them) or OpenAI's `image_url` parts with a data
    URL. Other kinds are left out."""

    type: str = Field(max_length=50)
    text: str | None = None
    media_type: str | None = Field(default=None, max_length=100)
    url: str | None = None
    image_url: ImageUrl | None = None

    def picture(self) -> tuple[str | None, str | None] | None:
        """(media type, url) of a picture part, else None."""
        if self.type == "file":
            return self.media_type, self.url
        if self.type == "image_url":
            return None, self.image_url.url if self.image_url is not None else None
        return None


class ImportMessage(CamelModel):
    """One message: `content` (a string or parts, OpenAI) or `parts` (the history endpoint's shape).

    `timestamp` is epoch milliseconds or an ISO 8601 date-time (with a zone; UTC without one);
    `createdAtMs` (the history shape) is the same. Other fields (`id`, `status`, `name`) are ignored.
    System, developer and tool messages are not history: they are skipped and counted."""

    role: Literal["user", "assistant", "system", "developer", "tool"]
    content: str | list[ImportPart] | None = None
    parts: list[ImportPart] | None = None
    timestamp: int | datetime | None = None
    created_at_ms: int | None = None
    files: list[ImportPart] | None = Field(default=None, description="the account export's pictures of a message")

    @field_validator("timestamp", mode="after")
    @classmethod
    def _naive_is_utc(cls, value: int | datetime | None) -> int | datetime | None:
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    def text(self) -> str | None:
        content = self.content if self.content is not None else self.parts
        if isinstance(content, str):
            return content
        if content is None:
            return None
        return "".join(p.text for p in content if p.type == "text" and p.text)

    def pictures(self) -> list[tuple[str | None, str | None]]:
        content = self.content if isinstance(self.content, list) else self.parts or []
        found = [p.picture() for p in [*content, *(self.files or [])]]
        return [p for p in found if p is not None]

    def at_ms(self) -> int | None:
        value = self.timestamp if self.timestamp is not None else self.created_at_ms
        if isinstance(value, datetime):
            return int(value.timestamp() * 1000)
        return value


class ImportRequest(CamelModel):
    messages: list[ImportMessage] = Field(min_length=1, max_length=MAX_IMPORT_MESSAGES)
    title: str | None = Field(
        default=None, max_length=200, description="the new conversation's name, when the default one is not empty"
    )


ImportState = Literal["running", "done"]


class ImportOut(CamelModel):
    """An import and its progress: `processed` of `total` turns have had their memory extraction."""

    id: str
    conversation_id: str
    state: ImportState
    messages: int = Field(description="messages stored")
    processed: int
    total: int
