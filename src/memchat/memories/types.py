"""The memory-type vocabulary, and the two shapes a memory has in code: a draft (not stored yet) and a
stored memory."""

from dataclasses import dataclass

BOUNDARY = "boundary"
PREFERENCE = "preference"
RELATIONSHIP_GOAL = "relationship_goal"
CONVERSATION_STYLE = "conversation_style"
MEMORY_TYPES = (BOUNDARY, PREFERENCE, RELATIONSHIP_GOAL, CONVERSATION_STYLE)
# The v2 extractors' fifth type: stable personal facts and dated life events. The v1 rules never
# produce it; its label is here so that the prompt shows it like the others.
FACT = "fact"
V2_MEMORY_TYPES = (*MEMORY_TYPES, FACT)

MEMORY_TYPE_LABELS = {
    BOUNDARY: "边界",
    PREFERENCE: "偏好",
    RELATIONSHIP_GOAL: "关系目标",
    CONVERSATION_STYLE: "对话风格",
    FACT: "个人信息",
}


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """A memory to add: from the rules, the embeddings classifier or an LLM's ADD.

    `vector` is its embedding by the current embedder, when one is configured.
    """

    type: str
    content: str
    importance: int
    vector: bytes | None = None
    # v2: the day of a dated event (ISO), and the active memories this one replaces (a change of mind)
    event_date: str | None = None
    supersedes: tuple[str, ...] = ()


@dataclass(slots=True)
class StoredMemory:
    """An active memory as a read saw it: what the prompt shows, recall ranks and extraction compares."""

    id: str
    type: str
    content: str
    importance: int
    updated_at_ms: int = 0
    embedding: bytes | None = None
    embedding_model: str | None = None
    event_date: str | None = None
    valid_from_ms: int | None = None

    def vector(self, model: str | None) -> bytes | None:
        """The stored vector when it was made by `model` (the configured embedder), else None."""
        return self.embedding if model is not None and self.embedding_model == model else None
