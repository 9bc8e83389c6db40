"""kill -9 of a real `memchat serve` in the middle of a stream: nothing the user sent is lost."""

import asyncio

import httpx
from sqlalchemy import select, update

from memchat.db.engine import Database, create_database
from memchat.models import Conversation, Memory, Message
from memchat.settings import Settings
from tests.conftest import auth, chat_body, create_agent, signup
from tests.invariants import assert_invariants
from tests.serve import Server
from tests.upstream import Reply, TestUpstream


async def reply_state_once_settled(db: Database, content: str, within_s: float = 20.0) -> str | None:
    """The turn's reply state as soon as it is no longer pending (or still pending after `within_s`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        async with db.read() as session:
            state = (await session.execute(select(Message.reply_state).where(Message.content == content))).scalar_one()
        if state != "pending" or loop.time() > deadline:
            return state
        await asyncio.sleep(0.1)


async def test_kill_mid_stream_then_restart(server: Server, database_url: str, upstream: TestUpstream) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
        token = await signup(client)
        agent = await create_agent(client, token)
        # one full turn first, then pretend its extraction never ran (a crash right after the save)
        upstream.script(Reply(text="记下了"))
        done = await client.post("/api/chat", json=chat_body(agent["id"], "我喜欢海边"), headers=auth(token))
        # on a failure, which requests reached the shared upstream first (a stray one takes the scripted reply)
        assert done.text == "记下了", [r["messages"][-1] for r in upstream.chat_requests]
        db = create_database(Settings(_env_file=None, database_url=database_url).database)  # type: ignore[call-arg]
        async with db.write() as session:
            await session.execute(update(Message).where(Message.role == "assistant").values(extraction_state="pending"))
            await session.execute(Memory.__table__.delete())

        upstream.script(Reply(deltas=["正在", "回答", "中"], hold_after=1))
        async with client.stream(
            "POST", "/api/chat", json=chat_body(agent["id"], "最后一句话"), headers=auth(token)
        ) as r:
            assert await anext(r.aiter_text()) == "正在"
            server.kill()
        upstream.release()

    async with db.read() as session:
        user_messages = (await session.execute(select(Message.content).where(Message.role == "user"))).scalars().all()
        assert sorted(user_messages) == ["我喜欢海边", "最后一句话"]

    await server.start()
    # the killed instance's lease runs out and an instance that is alive marks the turn interrupted
    assert await reply_state_once_settled(db, "最后一句话") == "interrupted"
    async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
        history = (await client.get(f"/api/agents/{agent['id']}/messages", headers=auth(token))).json()["messages"]
        assert [(m["role"], m["parts"][0]["text"]) for m in history] == [
            ("user", "我喜欢海边"),
            ("assistant", "记下了"),
            ("user", "最后一句话"),
        ]
        memories = (await client.get(f"/api/agents/{agent['id']}/memories", headers=auth(token))).json()["memories"]
        assert [m["content"] for m in memories] == ["我喜欢海边"]  # the pending extraction ran once, at start-up
        # a retry of the interrupted send answers it now, without a second user message
        upstream.script(Reply(text="现在回答"))
        body = chat_body(agent["id"], "最后一句话", message_id=history[2]["id"])
        retried = await client.post("/api/chat", json=body, headers=auth(token))
        assert retried.text == "现在回答"
    async with db.read() as session:
        interrupted = (await session.execute(select(Message).where(Message.content == "最后一句话"))).scalar_one()
        assert interrupted.reply_state == "done"
        conversation = (await session.execute(select(Conversation))).scalar_one()
        assert conversation.message_count == 4
    await assert_invariants(db, ["我喜欢海边", "最后一句话"])
    await db.dispose()
