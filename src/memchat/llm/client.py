"""The upstream LLM: any OpenAI-compatible chat-completions endpoint.

The streamed reply goes through aiohttp (memchat.llm.stream); non-streamed calls off the response
path (extraction, summaries) through the openai SDK, imported on the first such call (its import
is ~0.4 s of CPU that an app start, and a process that never makes one, need not pay).
"""

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from memchat.errors import UpstreamError
from memchat.llm.errors import (
    RETRY_STATUSES,
    STREAM_ERRORS,
    empty_reply_error,
    status_error,
    upstream_error,
)
from memchat.llm.stream import (
    DEFAULT_MAX_EVENT_BYTES,
    OpenedReply,
    SSEChatStream,
    discard,
    post_stream,
    retry_after_s,
)
from memchat.observability import metrics

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger("memchat.llm")

BaseUrlResolver = Callable[[], Awaitable[str]]

_MAX_BACKOFF_S = 8.0


class LLMClient:
    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str,
        model: str,
        connect_timeout_s: float,
        read_timeout_s: float,
        max_retries: int,
        max_tokens: int | None = None,
        stop: list[str] | None = None,
        temperature: float | None = None,
        resolve_base_url: BaseUrlResolver | None = None,
        reply_deadline_s: float = 600.0,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ):
        if base_url is None and resolve_base_url is None:
            raise ValueError("an upstream base URL or a resolver for one is required")
        self._base_url = base_url
        self._resolve_base_url = resolve_base_url
        self._api_key = api_key
        self.model = model
        self._read_timeout_s = read_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._http_session: aiohttp.ClientSession | None = None
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._stop = stop
        self._temperature = temperature
        self._client: AsyncOpenAI | None = None
        self._reply_deadline_s = reply_deadline_s
        self._max_event_bytes = max_event_bytes

    async def _url(self) -> str:
        if self._base_url is None:
            assert self._resolve_base_url is not None
            self._base_url = await self._resolve_base_url()
        return self._base_url.rstrip("/")

    async def _http(self) -> tuple[aiohttp.ClientSession, str]:
        base_url = await self._url()
        if self._http_session is None:
            self._http_session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=self._connect_timeout_s, sock_read=self._read_timeout_s
                ),
                # thousands of paced streams may be open at once; the OS, not a pool, is the cap
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=30),
                auto_decompress=True,
                trust_env=False,
            )
        return self._http_session, base_url

    async def _sdk(self) -> "AsyncOpenAI":
        if self._client is not None:
            return self._client
        base_url = await self._url()
        # the first time, ~0.4 s of imports: in a thread, so the event loop keeps serving streams
        await asyncio.to_thread(importlib.import_module, "openai")
        import openai

        if self._client is None:  # two first calls at once: the first one back builds the client
            self._client = openai.AsyncOpenAI(
                base_url=base_url,
                api_key=self._api_key,
                timeout=openai.Timeout(self._read_timeout_s, connect=self._connect_timeout_s),
                max_retries=self._max_retries,
            )
        return self._client

    def _options(self, extra: dict[str, Any]) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self._max_tokens is not None:
            options["max_tokens"] = self._max_tokens
        if self._stop:
            options["stop"] = self._stop
        if self._temperature is not None:
            options["temperature"] = self._temperature
        options.update(extra)
        return options

    async def open_stream(self, messages: list[dict[str, Any]], **extra: Any) -> aiohttp.ClientResponse:
        """POST a streamed completion: the response once its headers are in, whatever its status."""
        client, base_url = await self._http()
        body = {"model": self.model, "messages": messages, "stream": True, **self._options(extra)}
        return await post_stream(
            client,
            f"{base_url}/chat/completions",
            orjson.dumps(body),
            headers={"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"},
        )

    async def open_reply(self, messages: list[dict[str, Any]], **extra: Any) -> OpenedReply:
        """Start a streamed completion and wait for its first text. Raises UpstreamError when none comes.

        The one retry policy of the streamed reply: connection errors, 408/409/429/5xx, a stream
        that breaks or ends before any text, each tried again up to `max_retries` times with
        backoff (or the upstream's Retry-After). Nothing retries once text exists: the client
        would see it twice.
        """
        deadline = asyncio.get_running_loop().time() + self._reply_deadline_s
        for attempt in range(self._max_retries + 1):
            retry_after = 0.0
            try:
                response = await self.open_stream(messages, **extra)
            except STREAM_ERRORS as exc:
                failure = upstream_error(exc)
            else:
                if response.status != 200:
                    await discard(response)
                    failure = status_error(response.status)
                    if response.status not in RETRY_STATUSES:
                        metrics.upstream_failed(failure.code, retried=False)
                        raise failure
                    retry_after = retry_after_s(response)
                else:
                    stream = SSEChatStream(response, self._max_event_bytes)
                    deltas = aiter(stream.deltas())
                    try:
                        async for first in deltas:
                            if first:
                                return OpenedReply(stream, deltas, first, deadline)
                        failure = empty_reply_error()
                    except STREAM_ERRORS as exc:
                        failure = upstream_error(exc)
                    await stream.close()
            metrics.upstream_failed(failure.code, retried=attempt < self._max_retries)
            if attempt == self._max_retries:
                raise failure
            delay = min(max(retry_after, 0.25 * 2**attempt), _MAX_BACKOFF_S)
            log.warning(
                "upstream gave no text (%s); retry %d/%d in %.2fs", failure.code, attempt + 1, self._max_retries, delay
            )
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def complete(self, messages: list[dict[str, Any]], **extra: Any) -> str:
        """A non-streamed completion, for background work (LLM extraction, summaries)."""
        client = await self._sdk()
        import openai  # loaded by _sdk()

        try:
            response = await client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                **self._options(extra),
            )
        except openai.OpenAIError as exc:
            raise upstream_error(exc) from exc
        return response.choices[0].message.content or "" if response.choices else ""

    async def complete_structured(
        self, messages: list[dict[str, Any]], response_format: dict[str, Any], **extra: Any
    ) -> str:
        """A non-streamed completion asking for `response_format` (a JSON schema).

        An upstream that refuses the request (a 4xx other than 429: no json_schema support) is
        asked once more without it; the caller parses the answer tolerantly either way.
        """
        try:
            return await self.complete(messages, response_format=response_format, **extra)
        except UpstreamError as exc:
            if exc.code != "upstream_rejected":
                raise
            log.info("upstream refused response_format; asking without it")
            return await self.complete(messages, **extra)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
        if self._http_session is not None:
            await self._http_session.close()
