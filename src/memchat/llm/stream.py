"""The streamed chat completion on the response path: aiohttp + orjson.

The openai SDK cost 3-4 ms of request transform and ~70 µs per chunk here, and httpx + httpx-sse
still ~1 ms to the first event and ~16 µs per chunk (bench/PROFILE.md); aiohttp's C parser reads
the same SSE frames at about a third of that. The SDK still serves the non-streamed calls off the
response path.
"""

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

import aiohttp
import orjson

from memchat.llm.errors import UpstreamStreamError


async def sse_data(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    """The `data` of each server-sent event (its data lines joined by newlines); other fields ignored.

    Reads whatever bytes have arrived and splits out every complete event at once: a reply that
    comes in a burst costs one read, not two line reads per event.
    """
    pending = b""
    async for chunk in chunks:
        pending += chunk
        if b"\r" in pending:
            # CRLF or CR line ends; a CR at the very end may be the first half of a CRLF
            keep = pending.endswith(b"\r")
            body = pending[:-1] if keep else pending
            pending = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + (b"\r" if keep else b"")
        *events, pending = pending.split(b"\n\n")
        for event in events:
            if (data := _event_data(event)) is not None:
                yield data
    if pending.strip() and (data := _event_data(pending.rstrip(b"\r\n"))) is not None:
        yield data


def _event_data(event: bytes) -> bytes | None:
    if event.startswith(b"data: ") and b"\n" not in event:
        return event[6:]  # what every OpenAI-compatible server sends: one data line per event
    data = []
    for line in event.split(b"\n"):
        if line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(b" ") else value)
    return b"\n".join(data) if data else None


class SSEChatStream:
    """Text deltas of one streamed completion; `finish_reason` is set once the stream ended properly."""

    def __init__(self, response: aiohttp.ClientResponse):
        self._response = response
        self.finish_reason: str | None = None

    async def deltas(self) -> AsyncIterator[str]:
        async for data in sse_data(self._response.content.iter_any()):
            if data == b"[DONE]":
                return
            try:
                chunk = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise UpstreamStreamError("unreadable stream frame") from exc
            if not isinstance(chunk, dict):
                raise UpstreamStreamError("unexpected stream frame")
            if "error" in chunk:
                raise UpstreamStreamError(f"upstream error in stream: {chunk['error']!r:.200}")
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                content = delta.get("content")
                if content:
                    yield content
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]

    async def close(self) -> None:
        self._response.release()


@dataclass
class OpenedReply:
    """A stream that has produced its first text: the rest of its deltas still to read."""

    stream: SSEChatStream
    deltas: AsyncIterator[str]
    first: str


async def post_stream(
    session: aiohttp.ClientSession, url: str, payload: bytes, *, headers: dict[str, str]
) -> aiohttp.ClientResponse:
    """POST the completion request; the response once its headers are in (any status)."""
    return await session.post(url, data=payload, headers=headers)


async def discard(response: aiohttp.ClientResponse) -> None:
    try:
        await response.read()
    except (aiohttp.ClientError, TimeoutError):
        pass  # the status already says what went wrong
    finally:
        response.release()


def retry_after_s(response: aiohttp.ClientResponse) -> float:
    value = response.headers.get("retry-after", "")
    try:
        return float(value)
    except ValueError:
        return 0.0
