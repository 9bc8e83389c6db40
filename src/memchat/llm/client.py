"""The upstream LLM: any OpenAI-compatible chat-completions endpoint, through the openai SDK."""

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
import openai
from openai import AsyncOpenAI

from memchat.errors import UpstreamError

log = logging.getLogger("memchat.llm")

BaseUrlResolver = Callable[[], Awaitable[str]]

# What a broken stream raises: SDK errors, or the transport's own once the body is being read.
STREAM_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError, httpx2.HTTPError)


def upstream_error(exc: Exception) -> UpstreamError:
    """Map an SDK failure to the error the client sees (never the upstream's raw body)."""
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


class LLMStream:
    """Text deltas of one streamed completion; `finish_reason` is set once the stream ended properly."""

    def __init__(self, chunks: Any):
        self._chunks = chunks
        self.finish_reason: str | None = None

    async def deltas(self) -> AsyncIterator[str]:
        async for chunk in self._chunks:
            for choice in chunk.choices:
                if choice.delta is not None and choice.delta.content:
                    yield choice.delta.content
                if choice.finish_reason:
                    self.finish_reason = choice.finish_reason

    async def close(self) -> None:
        await self._chunks.close()


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
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._stop = stop
        self._temperature = temperature
        self._client: AsyncOpenAI | None = None

    async def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            base_url = self._base_url
            if base_url is None:
                assert self._resolve_base_url is not None
                base_url = await self._resolve_base_url()
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

    async def open_stream(self, messages: list[dict[str, str]], **extra: Any) -> LLMStream:
        """Start a streamed completion. Raises UpstreamError when it fails before streaming.

        The SDK retries connection errors, 429 and 5xx here, before any text exists; nothing
        retries once deltas flow (the user would see text twice).
        """
        client = await self._sdk()
        try:
            chunks = await client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                stream=True,
                **self._options(extra),
            )
        except openai.OpenAIError as exc:
            log.warning("upstream failed before streaming: %s", exc)
            raise upstream_error(exc) from exc
        return LLMStream(chunks)

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

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
