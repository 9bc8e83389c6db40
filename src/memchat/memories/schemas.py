from typing import Literal

from pydantic import Field

from memchat.schemas import CamelModel

MemoryType = Literal["boundary", "preference", "relationship_goal", "conversation_style", "fact"]
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
    valid_from_ms: int | None = Field(default=None, description="when the user said it (v2 extractors)")
    valid_to_ms: int | None = Field(default=None, description="when a change of mind replaced it")
    superseded_by: str | None = Field(default=None, description="the memory that replaced it")
    event_date: str | None = Field(default=None, description="the day of a dated event (ISO date)")


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


MemoryEventKind = Literal[
    "extracted", "created", "merged", "updated", "archived", "edited", "reverted", "unarchived", "superseded"
]
MemoryActor = Literal["rules", "embeddings", "llm", "user"]


class MemorySnapshot(CamelModel):
    """A memory's state as one event saw it."""

    type: MemoryType
    content: str
    importance: int
    status: MemoryStatus


class MemoryEventOut(CamelModel):
    """One change to a memory. `before` is null when the event created it."""

    id: str
    memory_id: str
    kind: MemoryEventKind
    actor: MemoryActor
    before: MemorySnapshot | None
    after: MemorySnapshot | None
    source_message_id: str | None
    created_at_ms: int


class MemoryHistory(CamelModel):
    events: list[MemoryEventOut] = Field(description="oldest first")


class MemoryRevert(CamelModel):
    event_id: str = Field(
        min_length=1,
        max_length=64,
        description="restore the memory's state from before this event (a memory it created is archived)",
    )
