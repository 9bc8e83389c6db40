"""The streamed reply's one retry policy (LLMClient.open_reply): at most 1 + max_retries requests, only before text."""

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
