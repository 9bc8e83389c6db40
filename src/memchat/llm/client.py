"""The upstream LLM: any OpenAI-compatible chat-completions endpoint.

The streamed reply goes through aiohttp (memchat.llm.stream); non-streamed calls off the response
path (extraction, summaries) through the openai SDK.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import openai
from openai import AsyncOpenAI

from memchat.errors import UpstreamError
from memchat.llm.stream import STREAM_FAILURES, SSEChatStream, open_sse_stream, transport_error

log = logging.getLogger("memchat.llm")

BaseUrlResolver = Callable[[], Awaitable[str]]

# What a broken stream raises once its body is being read.
STREAM_ERRORS: tuple[type[Exception], ...] = STREAM_FAILURES

LLMStream = SSEChatStream


def upstream_error(exc: Exception) -> UpstreamError:
    """Map a stream or SDK failure to the error the client sees (never the upstream's raw body)."""
    if isinstance(exc, STREAM_FAILURES):
        return transport_error(exc)
    if isinstance(exc, openai.APITimeoutError):
        return UpstreamError("the language model did not answer in time", status_code=504, code="upstream_timeout")
    if isinstance(exc, openai.APIConnectionError):
        return UpstreamError("the language model could not be reached", status_code=502, code="upstream_unreachable")
    if isinstance(exc, openai.RateLimitError):
        return UpstreamError(
            "the language model is rate limited; try again shortly", status_code=503, code="upstream_rate_limited"
        )
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code >= 500:
            return UpstreamError(
                f"the language model failed (HTTP {exc.status_code})", status_code=502, code="upstream_error"
            )
        return UpstreamError(
            f"the language model refused the request (HTTP {exc.status_code})",
            status_code=502,
            code="upstream_rejected",
        )
    return UpstreamError("the language model stream failed", status_code=502, code="upstream_error")


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
    ):
        if base_url is None and resolve_base_url is None:
            raise ValueError("an upstream base URL or a resolver for one is required")
        self._base_url = base_url
        self._resolve_base_url = resolve_base_url
        self._api_key = api_key
        self.model = model
        self._timeout = openai.Timeout(read_timeout_s, connect=connect_timeout_s)
        self._read_timeout_s = read_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._http_session: aiohttp.ClientSession | None = None
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._stop = stop
        self._temperature = temperature
        self._client: AsyncOpenAI | None = None

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

    async def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            base_url = await self._url()
            self._client = AsyncOpenAI(
                base_url=base_url, api_key=self._api_key, timeout=self._timeout, max_retries=self._max_retries
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

    async def open_stream(self, messages: list[dict[str, str]], **extra: Any) -> SSEChatStream:
        """Start a streamed completion. Raises UpstreamError when it fails before streaming.

        Connection errors, 429 and 5xx are retried here, before any text exists; nothing
        retries once deltas flow (the user would see text twice).
        """
        client, base_url = await self._http()
        body = {"model": self.model, "messages": messages, "stream": True, **self._options(extra)}
        return await open_sse_stream(
            client,
            f"{base_url}/chat/completions",
            body,
            headers={"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"},
            max_retries=self._max_retries,
        )

    async def complete(self, messages: list[dict[str, str]], **extra: Any) -> str:
        """A non-streamed completion, for background work (LLM extraction, summaries)."""
        client = await self._sdk()
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
        self, messages: list[dict[str, str]], response_format: dict[str, Any], **extra: Any
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
