"""What a turn tells its client, independent of the wire format: the events an encoder writes."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class MemorySaved:
    """Memories the inline rules stored for this turn, before the body ends."""

    memory_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The reply is stored (or there was nothing to store); `completed` is False for a cut-short reply."""

    completed: bool
    message_id: str | None


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """The reply could not be stored."""

    code: str
    message: str


TurnEvent = TextDelta | MemorySaved | TurnFinished | TurnFailed
