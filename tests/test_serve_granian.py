"""`memchat serve --server granian`: the same app behind granian, on both databases."""

import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from bench.stats import descendants
from sqlalchemy import select

from memchat.db.engine import create_database
from memchat.models import Message
from memchat.settings import Settings
from tests.conftest import auth, chat_body, create_agent, signup
from tests.serve import Server, free_port, server_env
from tests.upstream import Reply, TestUpstream

# Ample for a process to leave once its worker is killed 1 s after SIGTERM, even on a loaded machine.
# Without the kill timeout granian's supervisor waits on a stuck worker for good, so the wait runs out.
EXIT_DEADLINE_S = 30


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


async def test_a_worker_that_does_not_stop_is_killed_after_the_stop_timeout(
    database_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    """A worker that goes on after SIGTERM (here: stopped with SIGSTOP, so the signal stays pending)
    is killed after MEMCHAT_WORKER_STOP_TIMEOUT_S, and `memchat serve` exits instead of waiting on it."""
    env = server_env(database_url, upstream, tmp_path, MEMCHAT_WORKER_STOP_TIMEOUT_S="1")
    server = Server(env, free_port(), tmp_path / "granian.log", args=("--server", "granian"))
    await server.start()
    try:
        assert server.process is not None
        workers = descendants(server.process.pid)
        assert workers
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        server.process.terminate()
        try:
            server.process.wait(timeout=EXIT_DEADLINE_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"memchat serve still waits on its stopped worker {EXIT_DEADLINE_S} s after SIGTERM")
        for pid in workers:
            assert not os.path.exists(f"/proc/{pid}"), f"worker {pid} outlived memchat serve"
        assert "refused to gracefully stop" in (tmp_path / "granian.log").read_text()
    finally:
        server.stop()
