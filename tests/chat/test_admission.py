"""The chat setup gate (MEMCHAT_CHAT_SETUP_CONCURRENCY) never holds a place past a turn's setup."""

import asyncio
from typing import Any

import pytest

from memchat.settings import Settings
from tests.conftest import Running, auth, chat_body
from tests.upstream import Reply, TestUpstream


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(chat_setup_concurrency=1)


async def test_a_streaming_turn_does_not_hold_the_only_place(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(deltas=["慢", "慢来"], hold_after=1), Reply(text="第二个先答完"))
    headers = auth(user_token)
    async with running.client.stream("POST", "/api/chat", json=chat_body(agent["id"], "一"), headers=headers) as first:
        chunks = first.aiter_text()
        assert await anext(chunks) == "慢"
        # The first turn waits on its model; the second is set up and answered meanwhile.
        second = await asyncio.wait_for(
            running.client.post("/api/chat", json=chat_body(agent["id"], "二"), headers=headers), 10
        )
        assert (second.status_code, second.text) == (200, "第二个先答完")
        upstream.release()
        assert "".join([c async for c in chunks]) == "慢来"
    await running.settle()


async def test_requests_that_fail_give_their_place_back(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    headers = auth(user_token)
    failures = [
        await running.client.post("/api/chat", content=b"{not json", headers=headers),
        await running.client.post("/api/chat", json=chat_body(agent["id"], "hi"), headers=auth("not-a-token")),
        await running.client.post("/api/chat", json=chat_body("no-such-agent", "hi"), headers=headers),
    ]
    assert [r.status_code for r in failures] == [422, 401, 404]
    upstream.script(Reply(status=500), Reply(text="好的"))
    failed = await running.client.post("/api/chat", json=chat_body(agent["id"], "一"), headers=headers)
    assert failed.status_code == 502
    answered = await asyncio.wait_for(
        running.client.post("/api/chat", json=chat_body(agent["id"], "二"), headers=headers), 10
    )
    assert (answered.status_code, answered.text) == (200, "好的")
    await running.settle()
