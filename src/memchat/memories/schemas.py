from typing import Literal

from pydantic import Field

from memchat.schemas import CamelModel

MemoryType = Literal["boundary", "preference", "relationship_goal", "conversation_style"]
MemoryStatus = Literal["active", "archived"]


class MemoryOut(CamelModel):
    id: str
    agent_id: str
    type: MemoryType
    content: str
    importance: int
    source_message_id: str | None
    status: MemoryStatus
    created_at_ms: int
    updated_at_ms: int


class MemoryList(CamelModel):
    memories: list[MemoryOut]


class MemoryCreate(CamelModel):
    type: MemoryType
    content: str = Field(min_length=1, max_length=2000)
    importance: int = Field(default=3, ge=1, le=5)


class MemoryPatch(CamelModel):
    type: MemoryType | None = None
    content: str | None = Field(default=None, min_length=1, max_length=2000)
    importance: int | None = Field(default=None, ge=1, le=5)
    status: MemoryStatus | None = None
