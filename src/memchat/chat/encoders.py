"""Turn events on the wire.

A `TurnEncoder` turns a turn's event batches into a response; a retry's stored reply is the same
events replayed (`replayed`), so each wire format is written in one place. The turn
(chat.turn.run_chat_turn) takes the encoder of its route; it does not change for a new transport.
Here: the plain text stream of the AI SDK's TextStreamChatTransport (`/api/chat`, the seed's wire
format). Other transports: chat/ui_stream.py (the AI SDK's UI message stream) and openai_compat
(OpenAI's chunks).
"""

from collections.abc import AsyncIterator
from typing import Protocol

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from memchat.chat.events import (
    EventBatches,
    ReasoningDelta,
    TextDelta,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)
from memchat.chat.user_message import StoredReply


class TurnEncoder(Protocol):
    wire: str  # the wire format's name in the metrics: text, ui, openai

    async def stream(self, started: TurnStarted, batches: EventBatches) -> Response:
        """The response for a turn: its events as they come."""
        ...


def replayed(reply: StoredReply) -> tuple[TurnStarted, EventBatches]:
    """A retried turn whose reply is stored, as the events of a turn: its reasoning, its text, then its end."""
    events: list[TurnEvent] = [TextDelta(reply.text), TurnFinished(reply.status, None)]
    if reply.reasoning:
        events.insert(0, ReasoningDelta(reply.reasoning))

    async def batches() -> EventBatches:
        yield events

    return TurnStarted(reply.reply_id, reply.user_message_id, reply.conversation_id), batches()


STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class StreamFailed(Exception):
    """The turn failed after the response started: the body must not end as a success."""


async def plain_text_chunks(batches: EventBatches) -> AsyncIterator[bytes]:
    """Each delta as soon as it is here; deltas that arrived together go out in one write.

    Plain text has no way to say "failed" but to end the body abnormally: on TurnFailed the
    response stops without its final chunk, and the client sees a broken stream, not a reply.
    """
    async for batch in batches:
        if len(batch) == 1 and isinstance(event := batch[0], TextDelta):
            yield event.text.encode("utf-8")
            continue
        text = "".join(event.text for event in batch if isinstance(event, TextDelta))
        if text:
            yield text.encode("utf-8")
        if any(isinstance(event, TurnFailed) for event in batch):
            raise StreamFailed


class PlainTextEncoder:
    """The seed's wire format: the reply's text, nothing else."""

    wire = "text"  # its label in the metrics

    async def stream(self, started: TurnStarted, batches: EventBatches) -> Response:
        return StreamBody(plain_text_chunks(batches), "text/plain; charset=utf-8")


PLAIN_TEXT = PlainTextEncoder()


class StreamBody(Response):
    """A streamed body, chunk by chunk from the relay.

    Unlike StreamingResponse it runs no task group and no disconnect listener per response: the
    relay owns the upstream and the save, so a client that goes away only ends these writes.
    """

    def __init__(self, chunks: AsyncIterator[bytes], media_type: str, headers: dict[str, str] | None = None):
        self.chunks = chunks
        self.status_code = 200
        self.media_type = media_type
        self.background = None
        self.init_headers({**STREAM_HEADERS, **(headers or {})})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            async for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client is gone (ASGI 2.4 servers raise here); the relay still saves the turn
        except StreamFailed:
            pass  # returning with the body unfinished: the server closes the connection mid-body
