from typing import Annotated

from pydantic import Field, StringConstraints

from memchat.schemas import CamelModel

KeyName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class ApiKeyCreate(CamelModel):
    name: KeyName = Field(description="what the key is for, to tell keys apart (1 to 100 characters)")


class ApiKeyOut(CamelModel):
    """An API key as listed: never the key itself, only its first characters."""

    id: str
    name: str
    prefix: str = Field(description="the key's first characters")
    created_at_ms: int
    last_used_at_ms: int | None = Field(description="the last request with the key, to the minute; null if never")


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="the key, shown this once: only its SHA-256 is stored")


class ApiKeyList(CamelModel):
    keys: list[ApiKeyOut] = Field(description="newest first")
