"""A turn in progress is owned in the database: requests that arrive together are decided there."""

import asyncio
from typing import Any

from sqlalchemy import select

from memchat.models import Conversation, Message
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, chat_body, create_agent, race_while_held, serve_app, signup
from tests.upstream import Reply, TestUpstream


async def stored(running: Running) -> list[tuple[str, str]]:
    async with running.db.read() as session:
        rows = (
            await session.execute(select(Message).where(Message.status != "superseded").order_by(Message.seq))
        ).scalars()
        return [(m.role, m.content) for m in rows]


async def test_the_same_send_twenty_times_at_once_is_answered_once(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="只答一次", delay_ms=20))
    body = chat_body(agent["id"], "你好", message_id="same-id")
    responses = await asyncio.gather(
        *(running.client.post("/api/chat", json=body, headers=auth(user_token)) for _ in range(20))
    )
    await running.settle()
    assert {r.status_code for r in responses} <= {200, 409}
    assert all(r.text == "只答一次" for r in responses if r.status_code == 200)
    assert len(upstream.chat_requests) == 1
    assert await stored(running) == [("user", "你好"), ("assistant", "只答一次")]


async def test_two_regenerates_at_once_leave_one_live_reply(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="第一版"), Reply(deltas=["第二", "版"], hold_after=1), Reply(text="第三版"))
    await chat(running, user_token, agent["id"], "写首诗")
    assert upstream.wait_stream_started()  # the first reply's
    body = chat_body(agent["id"], "写首诗", trigger="regenerate-message")
    responses = await race_while_held(
        upstream, [running.client.post("/api/chat", json=body, headers=auth(user_token)) for _ in range(2)]
    )
    await running.settle()
    assert sorted(r.status_code for r in responses) == [200, 409]
    assert len(upstream.chat_requests) == 2
    history = await stored(running)
    assert history == [("user", "写首诗"), ("assistant", "第二版")]
    async with running.db.read() as session:
        assert (await session.execute(select(Conversation.message_count))).scalar_one() == 2


async def test_concurrent_turns_each_leave_their_lines_in_the_summary(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    texts = [f"第{i}件事" for i in range(5)]
    upstream.script(*(Reply(text=f"回答{i}", delay_ms=10) for i in range(5)))
    await asyncio.gather(
        *(running.client.post("/api/chat", json=chat_body(agent["id"], t), headers=auth(user_token)) for t in texts)
    )
    await running.settle()
    async with running.db.read() as session:
        summary = (await session.execute(select(Conversation.summary))).scalar_one()
    for i in range(5):
        assert f"用户：第{i}件事" in summary
        assert "Agent：回答" in summary
    assert sum(summary.count(f"Agent：回答{i}") >= 1 for i in range(5)) == 5


async def test_a_slow_first_token_keeps_its_lease(settings: Settings, upstream: TestUpstream) -> None:
    """The lease is renewed from commit point 1 on: a model slower than the lease is no dead instance."""
    async with serve_app(settings, turn_lease_s=1.0) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        upstream.script(Reply(deltas=["终于"], delay_ms=5000))
        body = chat_body(agent["id"], "慢慢想", message_id="m-slow")
        first = asyncio.create_task(running.client.post("/api/chat", json=body, headers=auth(token)))
        assert await asyncio.to_thread(upstream.wait_stream_started)
        await asyncio.sleep(2.5)  # the subject of the test: over twice the lease goes by before the first text
        retry = await running.client.post("/api/chat", json=body, headers=auth(token))
        assert retry.status_code == 409
        assert (await first).text == "终于"
        await running.settle()
        assert len(upstream.chat_requests) == 1
        assert await stored(running) == [("user", "慢慢想"), ("assistant", "终于")]
