"""What a turn tells its client, independent of the wire format: the events an encoder writes."""

from collections.abc import AsyncIterator
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


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning, streamed before (or beside) the reply's text. It is
    stored with the reply and shown folded; it never enters a prompt, a summary or memory."""

    text: str


@dataclass(frozen=True, slots=True)
class MemoryNote:
    """A memory the turn changed, as a client shows it."""

    id: str
    type: str
    content: str
    importance: int
    action: str  # "added" (the inline rules add; other changes happen in the background)


@dataclass(frozen=True, slots=True)
class MemorySaved:
    """Memories this turn stored, before the body ends: the inline rules', or a background extraction's
    when it was done within MEMCHAT_MEMORY_STREAM_WAIT_S."""

    memories: tuple[MemoryNote, ...]


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The reply is stored (or there was nothing to store).

    `status` is the stored reply's: completed, incomplete (cut short by the upstream, the deadline
    or the size cap) or stopped (by the stop endpoint). With a stored reply, the conversation's
    new summary and message count.
    """

    status: str
    message_id: str | None
    summary: str | None = None
    message_count: int | None = None
    # the upstream failed after some text (the reply is stored incomplete)
    error: "TurnFailed | None" = None


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """The reply could not be stored (or may not be: the turn is no longer this request's)."""

    code: str
    message: str
    http_status: int = 500  # where the wire format can still say it (a non-streamed /v1 answer)


TurnEvent = TextDelta | ReasoningDelta | MemorySaved | TurnFinished | TurnFailed
# what an encoder reads: the events that arrived together, batch by batch, to the turn's end
EventBatches = AsyncIterator[list[TurnEvent]]
