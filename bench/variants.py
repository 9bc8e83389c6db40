"""Experimental variants of memchat's hot path, applied in a bench process only, to measure a fix first.

    python -m bench.variant_server --variant fast-upstream --port 18093   (MEMCHAT_* as for memchat serve)
    python -m bench.run --variant fast-upstream

`fast-upstream`: the streamed chat completion goes straight through an httpx2 client (the
transport the openai SDK itself uses, so memchat's STREAM_ERRORS still apply), with the body
encoded by orjson and each SSE `data:` line read with orjson. There is no SDK parameter
transform and no model object per chunk. Same request, same deltas and finish_reason, same
UpstreamError mapping for a non-2xx answer. Nothing in src/ changes: this is what
PROFILE.md's first recommendation would do, measured before anyone writes it for real.
"""

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import orjson

from memchat.errors import UpstreamError
from memchat.llm.client import LLMClient


class FastStream:
    """The interface of memchat.llm.client.LLMStream over a raw streamed response."""

    def __init__(self, response: httpx2.Response):
        self._response = response
        self.finish_reason: str | None = None

    async def deltas(self) -> AsyncIterator[str]:
        async for line in self._response.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            chunk = orjson.loads(data)
            for choice in chunk.get("choices") or ():
                content = (choice.get("delta") or {}).get("content")
                if content:
                    yield content
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]

    async def close(self) -> None:
        await self._response.aclose()


_clients: dict[int, httpx2.AsyncClient] = {}


async def _fast_open_stream(self: LLMClient, messages: list[dict[str, str]], **extra: Any) -> FastStream:
    client = _clients.get(id(self))
    if client is None:
        base_url = self._base_url
        if base_url is None:
            assert self._resolve_base_url is not None
            base_url = await self._resolve_base_url()
        client = _clients[id(self)] = httpx2.AsyncClient(
            base_url=base_url.rstrip("/"),
            timeout=httpx2.Timeout(self._timeout.read, connect=self._timeout.connect),
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=1000),
        )
    body = {"model": self.model, "messages": messages, "stream": True, **self._options(extra)}
    request = client.build_request(
        "POST",
        "/chat/completions",
        content=orjson.dumps(body),
        headers={"authorization": f"Bearer {self._api_key}", "content-type": "application/json"},
    )
    try:
        response = await client.send(request, stream=True)
    except httpx2.TimeoutException as exc:
        raise UpstreamError(
            "the language model did not answer in time", status_code=504, code="upstream_timeout"
        ) from exc
    except httpx2.HTTPError as exc:
        raise UpstreamError(
            "the language model could not be reached", status_code=502, code="upstream_unreachable"
        ) from exc
    if response.status_code != 200:
        await response.aclose()
        raise UpstreamError(
            f"the language model failed (HTTP {response.status_code})", status_code=502, code="upstream_error"
        )
    return FastStream(response)


def fast_upstream() -> None:
    LLMClient.open_stream = _fast_open_stream  # type: ignore[method-assign,assignment]


VARIANTS: dict[str, Callable[[], None]] = {"fast-upstream": fast_upstream}


def apply(name: str | None) -> None:
    if name:
        VARIANTS[name]()
