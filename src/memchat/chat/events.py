"""What a turn tells its client, independent of the wire format: the events an encoder writes."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """What a streamed turn is, known before its first text: the ids a client can keep.

    `reply_id` is the id the reply will be stored under (the history endpoint shows the same id);
    the other ids are None for a turn without an agent (nothing is stored).
    """

    reply_id: str
    user_message_id: str | None
    conversation_id: str | None
    agent_id: str | None


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
