"""The streamed chat completion on the response path: httpx + httpx-sse + orjson.

The openai SDK cost 3-4 ms of request transform and ~70 µs per chunk here (bench/PROFILE.md);
this path sends the same request and reads the same SSE frames at a fraction of that. The SDK
still serves the non-streamed calls off the response path.
"""

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
from httpx_sse import EventSource, SSEError

from memchat.errors import UpstreamError

log = logging.getLogger("memchat.llm")

_RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}


class UpstreamStreamError(Exception):
    """The upstream sent an error object or an unreadable frame in the middle of its stream."""


STREAM_FAILURES: tuple[type[Exception], ...] = (httpx.HTTPError, SSEError, UpstreamStreamError)


def status_error(status: int) -> UpstreamError:
    if status == 429:
        return UpstreamError(
            "the language model is rate limited; try again shortly", status_code=503, code="upstream_rate_limited"
        )
    if status >= 500:
        return UpstreamError(f"the language model failed (HTTP {status})", status_code=502, code="upstream_error")
    return UpstreamError(
        f"the language model refused the request (HTTP {status})", status_code=502, code="upstream_rejected"
    )


def transport_error(exc: Exception) -> UpstreamError:
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamError("the language model did not answer in time", status_code=504, code="upstream_timeout")
    if isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return UpstreamError("the language model could not be reached", status_code=502, code="upstream_unreachable")
    return UpstreamError("the language model stream failed", status_code=502, code="upstream_error")


class SSEChatStream:
    """Text deltas of one streamed completion; `finish_reason` is set once the stream ended properly."""

    def __init__(self, response: httpx.Response):
        self._response = response
        self.finish_reason: str | None = None

    async def deltas(self) -> AsyncIterator[str]:
        async for event in EventSource(self._response).aiter_sse():
            data = event.data
            if data == "[DONE]":
                return
            if not data:
                continue
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
        await self._response.aclose()


async def open_sse_stream(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], *, headers: dict[str, str], max_retries: int
) -> SSEChatStream:
    """POST the completion request; retry connection failures, 429 and 5xx before any byte of a reply."""
    payload = orjson.dumps(body)
    attempt = 0
    while True:
        try:
            request = client.build_request("POST", url, content=payload, headers=headers)
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            failure = transport_error(exc)
            retry_after = 0.0
        else:
            if response.status_code == 200:
                return SSEChatStream(response)
            await response.aread()
            await response.aclose()
            failure = status_error(response.status_code)
            if response.status_code not in _RETRY_STATUSES:
                raise failure
            retry_after = _retry_after_s(response)
        if attempt >= max_retries:
            raise failure
        attempt += 1
        delay = max(retry_after, 0.25 * 2 ** (attempt - 1))
        log.warning(
            "upstream failed before streaming (%s); retry %d/%d in %.2fs", failure.code, attempt, max_retries, delay
        )
        await asyncio.sleep(min(delay, 8.0))


def _retry_after_s(response: httpx.Response) -> float:
    value = response.headers.get("retry-after", "")
    try:
        return float(value)
    except ValueError:
        return 0.0
