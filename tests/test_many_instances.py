"""Two real `memchat serve` processes on one PostgreSQL database, as behind a load balancer."""

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from bench.stats import descendants
from sqlalchemy import select

from memchat.db.engine import Database, create_database
from memchat.models import Message
from memchat.serving import share_cores
from memchat.settings import Settings
from tests.conftest import auth, chat_body, create_agent, race_while_held, signup
from tests.serve import Server, free_port, redis_url, server_env
from tests.upstream import Reply, TestUpstream

REDIS = {"MEMCHAT_REDIS_URL": redis_url()}


@asynccontextmanager
async def started(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, count: int = 2, **env: str
) -> AsyncIterator[list[Server]]:
    """`count` `memchat serve` processes on one PostgreSQL database, sharing Redis (without it the
    second would refuse to start: test_a_second_instance_without_redis_refuses_to_start)."""
    base = server_env(postgres_url, upstream, tmp_path, **REDIS)
    servers = [Server({**base, **env}, free_port(), tmp_path / f"server-{n}.log") for n in range(count)]
    try:
        for server in servers:
            await server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
async def instances(postgres_url: str, upstream: TestUpstream, tmp_path: Path) -> AsyncIterator[list[Server]]:
    async with started(postgres_url, upstream, tmp_path) as servers:
        yield servers


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
    async with httpx.AsyncClient(timeout=30, verify=False) as client:
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
    async with httpx.AsyncClient(timeout=30, verify=False) as client:
        token, agent = await first_user(a)
        upstream.script(Reply(text="原来的"), Reply(deltas=["新", "的"], hold_after=1), Reply(text="又一个"))
        first = await client.post(f"{a.url}/api/chat", json=chat_body(agent["id"], "讲个笑话"), headers=auth(token))
        assert first.text == "原来的"
        assert upstream.wait_stream_started()  # that one's
        body = chat_body(agent["id"], "讲个笑话", trigger="regenerate-message")
        responses = await race_while_held(
            upstream, [client.post(f"{s.url}/api/chat", json=body, headers=auth(token)) for s in (a, b)]
        )
    assert sorted(r.status_code for r in responses) == [200, 409]
    assert await live(db) == [("user", "讲个笑话"), ("assistant", "新的")]
    assert len(upstream.chat_requests) == 2


async def test_restarting_one_instance_leaves_the_others_turn_alone_and_a_killed_ones_turn_is_recovered(
    instances: list[Server], db: Database, upstream: TestUpstream
) -> None:
    a, b = instances
    async with httpx.AsyncClient(timeout=30, verify=False) as client:
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
    async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as bound:
        token = await signup(bound)
        return token, await create_agent(bound, token)


async def test_the_chat_rate_limit_holds_across_instances_with_redis(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    async with started(postgres_url, upstream, tmp_path, **REDIS, MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE="5") as servers:
        token, agent = await first_user(servers[0])
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            statuses = []
            for i in range(12):  # round robin, as a load balancer would
                server = servers[i % 2]
                response = await client.post(
                    f"{server.url}/api/chat", json=chat_body(agent["id"], f"第{i}句"), headers=auth(token)
                )
                statuses.append(response.status_code)
    assert statuses.count(200) == 5
    assert statuses.count(429) == 7


async def test_the_login_throttle_holds_across_instances_with_redis(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    async with started(postgres_url, upstream, tmp_path, **REDIS) as servers:
        email = f"guess-{os.urandom(4).hex()}@example.com"
        async with httpx.AsyncClient(base_url=servers[0].url, timeout=30, verify=False) as bound:
            await signup(bound, email, password="the-right-one")
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            statuses = []
            for i in range(10):
                response = await client.post(
                    f"{servers[i % 2].url}/api/auth/login", json={"email": email, "password": f"wrong-{i}"}
                )
                statuses.append(response.status_code)
    assert statuses[:5] == [401] * 5  # five free attempts in all, not five per instance
    assert statuses[5:] == [429] * 5


def _serve_workers(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memchat", "serve", "--workers", "2", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_several_workers_are_refused_on_sqlite_and_without_redis(
    sqlite_url: str, postgres_url: str, tmp_path: Path
) -> None:
    base = {**os.environ, "MEMCHAT_DATA_DIR": str(tmp_path), "MEMCHAT_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    on_sqlite = _serve_workers({**base, "MEMCHAT_DATABASE_URL": sqlite_url})
    assert on_sqlite.returncode == 2
    assert "SQLite has one writer" in on_sqlite.stderr
    without_redis = _serve_workers({**base, "MEMCHAT_DATABASE_URL": postgres_url})
    assert without_redis.returncode == 2
    assert "MEMCHAT_REDIS_URL" in without_redis.stderr


@pytest.mark.parametrize("http_server", ["uvicorn", "granian"])
async def test_two_workers_on_postgresql_with_redis_answer_and_store_every_turn(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database, http_server: str
) -> None:
    env = server_env(postgres_url, upstream, tmp_path, **REDIS)
    server = Server(env, free_port(), tmp_path / "workers.log", args=("--workers", "2", "--server", http_server))
    await server.start()
    try:
        token, agent = await first_user(server)
        upstream.script(*(Reply(text=f"回答{i}") for i in range(6)))
        for i in range(6):  # a new connection each time: the workers share the socket
            async with httpx.AsyncClient(timeout=30, verify=False) as client:
                response = await client.post(
                    f"{server.url}/api/chat", json=chat_body(agent["id"], f"问题{i}"), headers=auth(token)
                )
            assert response.text == f"回答{i}"
        assert server.process is not None
        if http_server == "uvicorn":  # its workers are started afresh (granian's are forked: their
            # /proc environ is the parent's at its start, though the variable is in their memory)
            # each worker's embedding model has its share of the cores, not one thread per core each
            share = str(max(1, len(os.sched_getaffinity(0)) // 2))
            workers = descendants(server.process.pid)
            assert len(workers) >= 2
            assert {_environ(pid).get("OMP_NUM_THREADS") for pid in workers} == {share}
    finally:
        server.stop()
    assert await live(db) == [item for i in range(6) for item in (("user", f"问题{i}"), ("assistant", f"回答{i}"))]


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)


def test_each_worker_gets_its_share_of_the_cores_unless_told() -> None:
    env: dict[str, str] = {}
    share_cores(env, 1, 8)
    assert env == {}  # one worker: the model's own default, a thread per core
    share_cores(env, 2, 8)
    assert env == {"OMP_NUM_THREADS": "4"}
    env = {}
    share_cores(env, 3, 2)
    assert env == {"OMP_NUM_THREADS": "1"}
    env = {"OMP_NUM_THREADS": "2"}
    share_cores(env, 2, 2)
    assert env == {"OMP_NUM_THREADS": "2"}  # the operator's choice stands


async def test_three_instances_sent_the_same_message_at_once_answer_it_once(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database
) -> None:
    async with started(postgres_url, upstream, tmp_path, count=3) as servers:
        token, agent = await first_user(servers[0])
        upstream.script(Reply(text="一次就好", delay_ms=30))
        body = chat_body(agent["id"], "同一句话", message_id="m-three")
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            responses = await asyncio.gather(
                *(client.post(f"{s.url}/api/chat", json=body, headers=auth(token)) for s in servers for _ in range(3))
            )
    assert {r.status_code for r in responses} <= {200, 409}
    assert all(r.text == "一次就好" for r in responses if r.status_code == 200)
    assert len(upstream.chat_requests) == 1
    assert await live(db) == [("user", "同一句话"), ("assistant", "一次就好")]


async def _read_until_text(chunks: AsyncIterator[str], into: list[str]) -> None:
    async for chunk in chunks:
        into.append(chunk)
        if '"text-delta"' in chunk:
            return


def _sse_text(body: str) -> tuple[str, list[dict[str, object]]]:
    parts = [json.loads(e[6:]) for e in body.split("\n\n") if e.startswith("data: {")]
    return "".join(str(p["delta"]) for p in parts if p["type"] == "text-delta"), parts


async def test_a_reply_streamed_by_one_instance_is_resumed_and_stopped_through_another(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database
) -> None:
    async with started(postgres_url, upstream, tmp_path, **REDIS) as servers:
        a, b = servers
        token, agent = await first_user(a)
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            # resume on B while A streams: the same parts from the first, live to the end
            upstream.script(Reply(deltas=["一", "二", "三"], hold_after=1))
            posted: list[str] = []
            body = chat_body(agent["id"], "第一问")
            async with client.stream("POST", f"{a.url}/api/ui/chat", json=body, headers=auth(token)) as response:
                chunks = response.aiter_text()
                await _read_until_text(chunks, posted)
                resumed = await client.send(
                    client.build_request("GET", f"{b.url}/api/ui/chat/{agent['id']}/stream", headers=auth(token)),
                    stream=True,
                )
                assert resumed.status_code == 200
                upstream.release()
                async for chunk in chunks:
                    posted.append(chunk)
                resumed_text, resumed_parts = _sse_text((await resumed.aread()).decode())
            posted_text, posted_parts = _sse_text("".join(posted))
            assert posted_text == resumed_text == "一二三"
            assert resumed_parts[0] == posted_parts[0]
            gone = await client.get(f"{b.url}/api/ui/chat/{agent['id']}/stream", headers=auth(token))
            assert gone.status_code == 204
            # stop on B while A streams: A cancels its upstream and stores what it streamed
            upstream.reset()
            pieces = [f"第{i}段。" for i in range(300)]
            upstream.script(Reply(deltas=pieces, delay_ms=20))
            posted = []
            body = chat_body(agent["id"], "第二问")
            async with client.stream("POST", f"{a.url}/api/ui/chat", json=body, headers=auth(token)) as response:
                chunks = response.aiter_text()
                await _read_until_text(chunks, posted)
                stopped = await client.post(f"{b.url}/api/chat/{agent['id']}/stop", headers=auth(token))
                assert stopped.status_code == 204
                async for chunk in chunks:
                    posted.append(chunk)
            shown, parts = _sse_text("".join(posted))
            assert 0 < len(shown) < len("".join(pieces))
            assert parts[-1] == {"type": "finish", "finishReason": "other", "messageMetadata": {"status": "stopped"}}
            assert await asyncio.to_thread(upstream.wait_stream_abandoned, 10.0)
    async with db.read() as session:
        reply = (await session.execute(select(Message).where(Message.id == parts[0]["messageId"]))).scalar_one()
    assert (reply.status, reply.content) == ("stopped", shown)


async def test_a_second_instance_without_redis_refuses_to_start(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    alone = server_env(postgres_url, upstream, tmp_path)
    first = Server(alone, free_port(), tmp_path / "first.log")
    await first.start()
    try:
        for env, name in ((alone, "second"), ({**alone, **REDIS}, "with-redis")):
            second = Server(env, free_port(), tmp_path / f"{name}.log")
            with pytest.raises(RuntimeError, match="MEMCHAT_REDIS_URL"):
                await second.start()
            assert second.process is not None
            assert second.process.wait(timeout=30) != 0
        # the first one was never disturbed
        async with httpx.AsyncClient(base_url=first.url, timeout=30, verify=False) as client:
            assert (await client.get("/healthz")).status_code == 200
        # killed, it is not in the way of the next start (a restart after a crash)
        first.kill()
        again = Server(alone, free_port(), tmp_path / "again.log")
        await again.start()
        again.stop()
    finally:
        first.stop()
