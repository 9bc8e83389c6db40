"""`memchat serve --server granian`: the same app behind granian, on both databases."""

from pathlib import Path

import httpx
from sqlalchemy import select

from memchat.db.engine import create_database
from memchat.models import Message
from memchat.settings import Settings
from tests.conftest import auth, chat_body, create_agent, signup
from tests.serve import Server, free_port, server_env
from tests.upstream import Reply, TestUpstream


async def test_granian_streams_a_turn_and_stores_both_messages(
    database_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    env = server_env(database_url, upstream, tmp_path)
    server = Server(env, free_port(), tmp_path / "granian.log", args=("--server", "granian"))
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
            token = await signup(client)
            agent = await create_agent(client, token)
            upstream.script(Reply(text="你好，周末愉快"))
            async with client.stream(
                "POST", "/api/chat", json=chat_body(agent["id"], "周末做什么"), headers=auth(token)
            ) as response:
                assert response.status_code == 200
                assert response.headers["x-request-id"]
                body = "".join([piece async for piece in response.aiter_text()])
        assert body == "你好，周末愉快"
    finally:
        server.stop()
    db = create_database(Settings(_env_file=None, database_url=database_url).database)
    try:
        async with db.read() as session:
            rows = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
            assert [(m.role, m.content) for m in rows] == [("user", "周末做什么"), ("assistant", "你好，周末愉快")]
    finally:
        await db.dispose()
