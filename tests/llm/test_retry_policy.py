"""The streamed reply's one retry policy (LLMClient.open_reply): at most 1 + max_retries requests, only before text."""

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from memchat.errors import UpstreamError
from memchat.llm.client import LLMClient
from tests.upstream import Reply, TestUpstream

PROMPT = [{"role": "user", "content": "你好"}]


@pytest.fixture
async def client(upstream: TestUpstream) -> AsyncIterator[LLMClient]:
    llm = LLMClient(
        base_url=upstream.base_url,
        api_key="x",
        model="m",
        connect_timeout_s=2,
        read_timeout_s=2,
        max_retries=2,
    )
    yield llm
    await llm.aclose()


def _failing(status: int) -> Reply:
    return Reply(status=status)


async def test_a_failing_upstream_gets_one_request_per_attempt(client: LLMClient, upstream: TestUpstream) -> None:
    upstream.script(*[_failing(500)] * 10)
    with pytest.raises(UpstreamError) as failure:
        await client.open_reply(PROMPT)
    assert failure.value.code == "upstream_error"
    assert len(upstream.chat_requests) == 3  # 1 + max_retries, never (1 + max_retries)²


async def test_an_empty_reply_is_retried_within_the_same_budget(client: LLMClient, upstream: TestUpstream) -> None:
    upstream.script(Reply(no_content=True), _failing(503), Reply(text="终于来了"))
    reply = await client.open_reply(PROMPT)
    rest = [delta async for delta in reply.deltas]
    await reply.stream.close()
    assert reply.first + "".join(rest) == "终于来了"
    assert len(upstream.chat_requests) == 3


async def test_empty_replies_until_the_budget_is_spent_are_a_502(client: LLMClient, upstream: TestUpstream) -> None:
    upstream.script(*[Reply(no_content=True)] * 5)
    with pytest.raises(UpstreamError) as failure:
        await client.open_reply(PROMPT)
    assert failure.value.code == "upstream_empty"
    assert len(upstream.chat_requests) == 3


async def test_a_refused_request_is_not_retried(client: LLMClient, upstream: TestUpstream) -> None:
    upstream.script(_failing(400), Reply())
    with pytest.raises(UpstreamError) as failure:
        await client.open_reply(PROMPT)
    assert failure.value.code == "upstream_rejected"
    assert len(upstream.chat_requests) == 1


async def test_the_sdk_calls_fail_with_the_streams_codes(client: LLMClient, upstream: TestUpstream) -> None:
    """complete() goes through the openai SDK, imported on its first call: its errors map as the stream's."""
    upstream.script(_failing(400))
    with pytest.raises(UpstreamError) as refused:
        await client.complete(PROMPT)
    assert refused.value.code == "upstream_rejected"
    nowhere = LLMClient(
        base_url="http://127.0.0.1:9/v1", api_key="x", model="m", connect_timeout_s=2, read_timeout_s=2, max_retries=0
    )
    try:
        with pytest.raises(UpstreamError) as unreachable:
            await nowhere.complete(PROMPT)
    finally:
        await nowhere.aclose()
    assert unreachable.value.code == "upstream_unreachable"


class _ClosesKeptAliveConnections:
    """An upstream whose kept-alive connections close as the next request comes in on them: what
    the client meets when the server's idle timeout runs out as it sends (uvicorn's is 5 s)."""

    def __init__(self) -> None:
        self.connections = 0
        self.answered = 0
        self.dropped = 0
        self._server: asyncio.Server | None = None
        self.base_url = ""

    async def __aenter__(self) -> "_ClosesKeptAliveConnections":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        requests = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                requests += 1
                if requests > 1:  # the kept-alive connection closes under the request
                    self.dropped += 1
                    return
                length = int(
                    next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")).split(
                        b":"
                    )[1]
                )
                await reader.readexactly(length)
                chunk = {"choices": [{"index": 0, "delta": {"content": "还在"}, "finish_reason": None}]}
                body = b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\ndata: [DONE]\n\n"
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
                self.answered += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


async def _whole_reply(llm: LLMClient) -> str:
    reply = await llm.open_reply(PROMPT)
    rest = [delta async for delta in reply.deltas]
    await reply.stream.close()
    return reply.first + "".join(rest)


async def test_a_kept_alive_connection_closed_under_the_request_is_tried_again_on_another() -> None:
    """With no retries allowed: the request never reached the model, so it goes again on a new connection."""
    async with _ClosesKeptAliveConnections() as upstream:
        llm = LLMClient(
            base_url=upstream.base_url, api_key="x", model="m", connect_timeout_s=2, read_timeout_s=2, max_retries=0
        )
        try:
            assert await _whole_reply(llm) == "还在"
            assert await _whole_reply(llm) == "还在"
        finally:
            await llm.aclose()
    assert upstream.dropped == 1  # the second reply's first try met the closed connection
    assert (upstream.answered, upstream.connections) == (2, 2)
