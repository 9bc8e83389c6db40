"""Turn events on the wire. Today's one transport: the AI SDK's TextStreamChatTransport (plain text).

An encoder turns the relay's event batches into body chunks, and a stored reply into a response.
A new transport adds its encoder here; the turn does not change.
"""

from collections.abc import AsyncIterator

from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from memchat.chat.events import TextDelta, TurnEvent, TurnFailed

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class StreamFailed(Exception):
    """The turn failed after the response started: the body must not end as a success."""


async def plain_text_chunks(batches: AsyncIterator[list[TurnEvent]]) -> AsyncIterator[bytes]:
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


def plain_text_stream(batches: AsyncIterator[list[TurnEvent]]) -> Response:
    return StreamBody(plain_text_chunks(batches), "text/plain; charset=utf-8")


def plain_text_stored(text: str) -> Response:
    """A retry answered with the reply already stored."""
    return PlainTextResponse(text, headers=STREAM_HEADERS)


class StreamBody(Response):
    """A streamed body, chunk by chunk from the relay.

    Unlike StreamingResponse it runs no task group and no disconnect listener per response: the
    relay owns the upstream and the save, so a client that goes away only ends these writes.
    """

    def __init__(self, chunks: AsyncIterator[bytes], media_type: str):
        self.chunks = chunks
        self.status_code = 200
        self.media_type = media_type
        self.background = None
        self.init_headers(STREAM_HEADERS)

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
