"""Redis going away and coming back under a real `memchat serve` on PostgreSQL: never a 5xx.

The chat rate limit and the login throttle fall back to this instance's own counters; resume and
stop answer 503 `redis_unavailable` with Retry-After; /healthz is a 503 a load balancer acts on.
Each test runs its own redis-server on a free port, killed and restarted on the same port."""

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from memchat.db.engine import create_database
from memchat.models import Message
from memchat.settings import Settings
from tests.conftest import auth, chat_body, create_agent, signup
from tests.serve import Server, free_port, server_env
from tests.upstream import DEFAULT_REPLY, TestUpstream


class RedisServer:
    """A redis-server of this test's own, without persistence: a restart starts empty."""

    def __init__(self, port: int, log: Path):
        self.port = port
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        for _ in range(400):  # bounded wait until it answers PING
            if self.process.poll() is not None:
                raise RuntimeError(self.log.read_text())
            ping = await asyncio.create_subprocess_exec(
                "redis-cli",
                "-p",
                str(self.port),
                "ping",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, _ = await ping.communicate()
            if out.strip() == b"PONG":
                return
        raise RuntimeError("redis-server did not come up")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[RedisServer]:
    server = RedisServer(free_port(), tmp_path / "redis.log")
    await server.start()
    yield server
    server.stop()


async def _serve(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, redis: RedisServer, per_minute: int = 3
) -> Server:
    env = server_env(
        postgres_url,
        upstream,
        tmp_path,
        MEMCHAT_REDIS_URL=redis.url,
        MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE=str(per_minute),
    )
    server = Server(env, free_port(), tmp_path / "server.log")
    await server.start()
    return server


def _redis_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "redis_unavailable"
    assert response.headers["retry-after"] == "1"


async def _login(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"email": email, "password": password})


async def test_redis_down_degrades_or_answers_503_and_recovers_without_a_5xx(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, redis: RedisServer
) -> None:
    server = await _serve(postgres_url, upstream, tmp_path, redis)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
            tokens = {name: await signup(client, f"{name}@example.com", password="password-1") for name in "abcd"}
            agents = {name: (await create_agent(client, token))["id"] for name, token in tokens.items()}
            warm = await client.post("/api/chat", json=chat_body(agents["a"], "你好"), headers=auth(tokens["a"]))
            assert warm.text == DEFAULT_REPLY
            assert (await client.get("/healthz")).status_code == 200

            redis.kill()
            health = await client.get("/healthz")
            assert health.status_code == 503
            assert health.json()["error"]["code"] == "redis_unavailable"  # the shape of its other 503s

            # the chat rate limit counts in this process: 3 a minute, then 429
            chats = [
                await client.post("/api/chat", json=chat_body(agents["b"], f"第{n}句"), headers=auth(tokens["b"]))
                for n in range(4)
            ]
            assert [r.status_code for r in chats] == [200, 200, 200, 429], [r.text for r in chats]
            assert chats[0].text == DEFAULT_REPLY
            assert chats[3].json()["error"]["code"] == "rate_limited"

            # the login throttle counts in this process: 5 free failures, then 429
            assert (await _login(client, "a@example.com", "password-1")).status_code == 200
            failures = [await _login(client, "c@example.com", "wrong-password") for _ in range(6)]
            assert [r.status_code for r in failures] == [401] * 5 + [429]

            # resume and stop need Redis: a clear 503 to retry
            _redis_unavailable(await client.get(f"/api/chat/{agents['a']}/stream", headers=auth(tokens["a"])))
            _redis_unavailable(await client.get(f"/api/ui/chat/{agents['a']}/stream", headers=auth(tokens["a"])))
            _redis_unavailable(await client.post(f"/api/chat/{agents['a']}/stop", headers=auth(tokens["a"])))

            await redis.start()  # the same port, empty: every pooled connection of the server is stale
            after: list[httpx.Response] = []
            for n in range(8):
                after.append(await client.get("/healthz"))
                after.append(await _login(client, "a@example.com", "password-1"))
                after.append(await client.get(f"/api/chat/{agents['a']}/stream", headers=auth(tokens["a"])))
                after.append(await client.post(f"/api/chat/{agents['a']}/stop", headers=auth(tokens["a"])))
                if n < 3:
                    body = chat_body(agents["d"], f"回来了{n}")
                    after.append(await client.post("/api/chat", json=body, headers=auth(tokens["d"])))
            assert all(r.status_code in (200, 204) for r in after), [(r.status_code, r.text[:80]) for r in after]
            # the limit is Redis's again: d's three chats counted there
            fourth = await client.post("/api/chat", json=chat_body(agents["d"], "第四句"), headers=auth(tokens["d"]))
            assert fourth.status_code == 429
    finally:
        server.stop()


async def test_redis_killed_and_restarted_under_a_load_answers_no_5xx_and_loses_nothing(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, redis: RedisServer
) -> None:
    server = await _serve(postgres_url, upstream, tmp_path, redis, per_minute=1000)
    results: list[tuple[str, int, str]] = []
    broken: list[str] = []
    progress = asyncio.Condition()
    done = asyncio.Event()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
            users = []
            for n in range(4):
                token = await signup(client, f"load{n}@example.com", password="password-1")
                users.append((f"load{n}@example.com", token, (await create_agent(client, token))["id"]))

            async def record(kind: str, response: httpx.Response) -> None:
                code = response.json()["error"]["code"] if response.status_code >= 400 else ""
                async with progress:
                    results.append((kind, response.status_code, code))
                    progress.notify_all()

            async def load(email: str, token: str, agent_id: str) -> None:
                n = 0
                try:
                    while not done.is_set():
                        n += 1
                        body = chat_body(agent_id, f"第{n}句")
                        await record("chat", await client.post("/api/chat", json=body, headers=auth(token)))
                        await record("login", await _login(client, email, "password-1"))
                        await record("resume", await client.get(f"/api/chat/{agent_id}/stream", headers=auth(token)))
                        await record("stop", await client.post(f"/api/chat/{agent_id}/stop", headers=auth(token)))
                except Exception as exc:  # a broken body, a body that is not JSON: the test fails, not hangs
                    async with progress:
                        broken.append(repr(exc))
                        progress.notify_all()

            async def until(count: int) -> None:
                async with progress:
                    await progress.wait_for(lambda: len(results) >= count or bool(broken))

            workers = [asyncio.ensure_future(load(*user)) for user in users]
            await until(40)
            redis.kill()
            down_from = len(results)
            await until(down_from + 60)
            await redis.start()
            up_from = len(results)
            await until(up_from + 60)
            done.set()
            await asyncio.gather(*workers)
    finally:
        server.stop()

    assert broken == []
    allowed = {("resume", 503, "redis_unavailable"), ("stop", 503, "redis_unavailable")}
    wrong = [r for r in results if r[1] >= 500 and r not in allowed]
    assert wrong == [], wrong
    assert {status for kind, status, _ in results if kind in ("chat", "login")} == {200}
    assert any(r in allowed for r in results[down_from:up_from])  # Redis was down meanwhile
    db = create_database(Settings(_env_file=None, database_url=postgres_url).database)
    try:
        async with db.read() as session:
            replies = (
                await session.execute(select(func.count()).select_from(Message).where(Message.role == "assistant"))
            ).scalar_one()
    finally:
        await db.dispose()
    assert replies == sum(kind == "chat" for kind, _, _ in results)  # every chat stored once, none lost
