"""Two real `memchat serve` processes on one PostgreSQL database, as behind a load balancer."""

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from memchat.db.engine import Database, create_database
from memchat.models import Message
from memchat.settings import Settings
from tests.conftest import auth, chat_body, create_agent, signup
from tests.serve import Server, free_port
from tests.upstream import Reply, TestUpstream


@pytest.fixture
async def instances(postgres_url: str, upstream: TestUpstream, tmp_path: Path) -> AsyncIterator[list[Server]]:
    env = {
        **os.environ,
        "MEMCHAT_DATABASE_URL": postgres_url,
        "MEMCHAT_LLM_BASE_URL": upstream.base_url,
        "MEMCHAT_LLM_MAX_RETRIES": "0",
        "MEMCHAT_JWT_SECRET": "subprocess-test-secret-0123456789abcdef",
        "MEMCHAT_DATA_DIR": str(tmp_path / "data"),
        "MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE": "0",
        "MEMCHAT_TURN_LEASE_S": "2",
    }
    servers = [Server(env, free_port(), tmp_path / f"server-{name}.log") for name in "ab"]
    for server in servers:
        await server.start()
    yield servers
    for server in servers:
        server.stop()


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[Database]:
    database = create_database(Settings(_env_file=None, database_url=postgres_url).database)
    yield database
    await database.dispose()


async def reply_state(db: Database, content: str) -> str | None:
    async with db.read() as session:
        return (await session.execute(select(Message.reply_state).where(Message.content == content))).scalar_one()


async def live(db: Database) -> list[tuple[str, str]]:
    async with db.read() as session:
        rows = (
            await session.execute(select(Message).where(Message.status != "superseded").order_by(Message.seq))
        ).scalars()
        return [(m.role, m.content) for m in rows]


async def test_a_retry_on_another_instance_while_the_first_streams_is_409(
    instances: list[Server], db: Database, upstream: TestUpstream
) -> None:
    a, b = instances
    async with httpx.AsyncClient(timeout=30) as client:
        token, agent = await first_user(a)
        upstream.script(Reply(deltas=["慢", "慢说"], hold_after=1))
        body = chat_body(agent["id"], "你好", message_id="m-1")
        async with client.stream("POST", f"{a.url}/api/chat", json=body, headers=auth(token)) as response:
            chunks = response.aiter_text()
            assert await anext(chunks) == "慢"
            retried = await client.post(f"{b.url}/api/chat", json=body, headers=auth(token))
            assert retried.status_code == 409
            assert retried.json()["error"]["code"] == "turn_in_progress"
            keyed = await client.post(
                f"{b.url}/api/chat",
                json=chat_body(agent["id"], "你好"),
                headers={**auth(token), "Idempotency-Key": "m-1"},
            )
            assert keyed.status_code == 409
            upstream.release()
            assert "".join([c async for c in chunks]) == "慢说"
        after = await client.post(f"{b.url}/api/chat", json=body, headers=auth(token))
        assert after.text == "慢慢说"  # the stored reply, from the other instance
    assert len(upstream.chat_requests) == 1
    assert await live(db) == [("user", "你好"), ("assistant", "慢慢说")]


async def test_regenerates_sent_to_both_instances_at_once_leave_one_live_reply(
    instances: list[Server], db: Database, upstream: TestUpstream
) -> None:
    a, b = instances
    async with httpx.AsyncClient(timeout=30) as client:
        token, agent = await first_user(a)
        upstream.script(Reply(text="原来的"), Reply(text="新的", delay_ms=30), Reply(text="又一个", delay_ms=30))
        first = await client.post(f"{a.url}/api/chat", json=chat_body(agent["id"], "讲个笑话"), headers=auth(token))
        assert first.text == "原来的"
        body = chat_body(agent["id"], "讲个笑话", trigger="regenerate-message")
        responses = await asyncio.gather(
            *(client.post(f"{s.url}/api/chat", json=body, headers=auth(token)) for s in (a, b))
        )
    assert sorted(r.status_code for r in responses) == [200, 409]
    assert await live(db) == [("user", "讲个笑话"), ("assistant", "新的")]
    assert len(upstream.chat_requests) == 2


async def test_restarting_one_instance_leaves_the_others_turn_alone_and_a_killed_ones_turn_is_recovered(
    instances: list[Server], db: Database, upstream: TestUpstream
) -> None:
    a, b = instances
    async with httpx.AsyncClient(timeout=30) as client:
        token, agent = await first_user(a)
        upstream.script(Reply(deltas=["还在", "说"], hold_after=1))
        body = chat_body(agent["id"], "在吗", message_id="m-live")
        async with client.stream("POST", f"{a.url}/api/chat", json=body, headers=auth(token)) as response:
            chunks = response.aiter_text()
            assert await anext(chunks) == "还在"
            b.kill()
            await b.start()  # starting B must not touch A's live turn
            assert await reply_state(db, "在吗") == "pending"
            upstream.release()
            assert "".join([c async for c in chunks]) == "说"
        assert await reply_state(db, "在吗") == "done"

        upstream.script(Reply(deltas=["说到", "一半"], hold_after=1))  # A dies in the middle of this one
        body = chat_body(agent["id"], "然后呢", message_id="m-killed")
        async with client.stream("POST", f"{a.url}/api/chat", json=body, headers=auth(token)) as response:
            assert await anext(response.aiter_text()) == "说到"
            a.kill()
        upstream.release()
        assert await state_once_settled(db, "然后呢") == "interrupted"  # B sees A's lease run out
        upstream.script(Reply(text="接着说"))
        retried = await client.post(f"{b.url}/api/chat", json=body, headers=auth(token))
        assert retried.text == "接着说"
        again = await client.post(f"{b.url}/api/chat", json=body, headers=auth(token))
        assert again.text == "接着说"
    assert [m for m in await live(db) if m[1] in ("然后呢", "接着说")] == [("user", "然后呢"), ("assistant", "接着说")]


async def state_once_settled(db: Database, content: str, within_s: float = 20.0) -> str | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while (state := await reply_state(db, content)) == "pending" and loop.time() < deadline:
        await asyncio.sleep(0.1)
    return state


async def first_user(server: Server) -> tuple[str, dict[str, object]]:
    """A user and an agent, made through one instance (the factories in conftest take a bound client)."""
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as bound:
        token = await signup(bound)
        return token, await create_agent(bound, token)
