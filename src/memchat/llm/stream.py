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

from memchat.llm.errors import UpstreamEventTooLarge, UpstreamStreamError

DEFAULT_MAX_EVENT_BYTES = 1_048_576


async def sse_data(
    chunks: AsyncIterable[bytes], max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
) -> AsyncIterator[bytes]:
    """The `data` of each server-sent event (its data lines joined by newlines); other fields ignored.

    Reads whatever bytes have arrived and splits out every complete event at once: a reply that
    comes in a burst costs one read, not two line reads per event. Linear in the bytes read: line
    ends are unified per chunk and each search starts where the last one stopped. An event larger
    than `max_event_bytes` raises UpstreamEventTooLarge.
    """
    pending = bytearray()
    searched = 0  # pending[:searched] holds no event boundary
    carried_cr = False  # the previous chunk ended with CR: maybe the first half of a CRLF
    async for chunk in chunks:
        if carried_cr:
            chunk = b"\r" + chunk
        carried_cr = chunk.endswith(b"\r")
        if carried_cr:
            chunk = chunk[:-1]
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        pending += chunk
        start = 0
        position = max(searched - 1, 0)  # a boundary may straddle the old end and the new chunk
        while (end := pending.find(b"\n\n", position)) != -1:
            if (data := _event_data(bytes(pending[start:end]))) is not None:
                yield data
            start = position = end + 2
        if start:
            del pending[:start]
        searched = len(pending)
        if len(pending) > max_event_bytes:
            raise UpstreamEventTooLarge(max_event_bytes)
    if carried_cr:
        pending += b"\n"
    if pending.strip() and (data := _event_data(bytes(pending).rstrip(b"\r\n"))) is not None:
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


class Thinking(str):
    """A delta of the model's reasoning (`delta.reasoning_content`, or `delta.reasoning`), not of its reply.

    Reasoning models (DeepSeek's deepseek-reasoner, Qwen3 and others served by vLLM or Ollama) stream
    their thinking beside the reply's text; a plain `str` delta is reply text.
    """

    __slots__ = ()


class SSEChatStream:
    """Deltas of one streamed completion: reply text as `str`, reasoning as `Thinking`;
    `finish_reason` is set once the stream ended properly."""

    def __init__(self, response: aiohttp.ClientResponse, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES):
        self._response = response
        self._max_event_bytes = max_event_bytes
        self.finish_reason: str | None = None

    async def deltas(self) -> AsyncIterator[str]:
        async for data in sse_data(self._response.content.iter_any(), self._max_event_bytes):
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
                thinking = delta.get("reasoning_content") or delta.get("reasoning")
                if thinking and isinstance(thinking, str):
                    yield Thinking(thinking)
                content = delta.get("content")
                if content:
                    yield content
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]

    async def close(self) -> None:
        self._response.release()


@dataclass
class OpenedReply:
    """A stream that has produced its first text (of the reply or of its reasoning): the rest of its
    deltas still to read."""

    stream: SSEChatStream
    deltas: AsyncIterator[str]
    first: str
    deadline: float  # event-loop time by which the reply must have ended (memchat.chat.relay stops it)


# A kept-alive connection the upstream closed as this request went out on it (its idle timeout ran
# out: uvicorn's is 5 s, many proxies' a minute) fails with one of these before any response.
_CLOSED_UNDER_US = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
# Each try takes another pooled connection or opens a new one; a pool holds several stale ones at most.
_CLOSED_CONNECTION_TRIES = 3


async def post_stream(
    session: aiohttp.ClientSession, url: str, payload: bytes, *, headers: dict[str, str]
) -> aiohttp.ClientResponse:
    """POST the completion request; the response once its headers are in (any status).

    A connection that closes before any response byte is tried again on another one, up to
    `_CLOSED_CONNECTION_TRIES` in all: nothing was answered, so this is no retry in the policy's
    sense (`max_retries` counts answers). A connection that cannot be made is not tried again here.
    """
    for attempt in range(_CLOSED_CONNECTION_TRIES):
        try:
            return await session.post(url, data=payload, headers=headers)
        except aiohttp.ClientConnectorError:
            raise
        except _CLOSED_UNDER_US:
            if attempt == _CLOSED_CONNECTION_TRIES - 1:
                raise
    raise AssertionError("unreachable")


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
