"""Shared fixtures: both databases, the test upstream, a real uvicorn serving the app, factories."""

import asyncio
import os
import shutil
import socket
import sqlite3
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memchat.app import AppState, create_app
from memchat.db.engine import Database, create_database
from memchat.db.migrate import upgrade
from memchat.models import Base
from memchat.settings import Settings
from tests.upstream import TestUpstream

# The seed's behaviour is the contract most tests hold to (docs/behaviour.md): they run under the
# `seed-v1` profile, here and in every `memchat serve` they start; tests of the default profile say
# `profile="standard"` (or set MEMCHAT_PROFILE) themselves.
os.environ.setdefault("MEMCHAT_PROFILE", "seed-v1")
# Password hashes at argon2's cheapest cost, here and in every `memchat serve` and CLI command the
# tests start: the default cost (~0.2 s of CPU per sign-up, login and password change) was a large
# part of the suite's CPU. tests/auth/test_password_hash.py holds the default and both costs.
os.environ.setdefault("MEMCHAT_PASSWORD_HASH_TIME_COST", "1")
os.environ.setdefault("MEMCHAT_PASSWORD_HASH_MEMORY_KIB", "8")
os.environ.setdefault("MEMCHAT_PASSWORD_HASH_PARALLELISM", "1")


# which tests share a worker under pytest-xdist, and in what order the units are handed out
pytest_plugins = ["tests.scheduling"]


POSTGRES_URL = os.environ.get("MEMCHAT_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
BACKENDS = ["sqlite", "postgresql"]


def _with_database(url: str, name: str) -> str:
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


async def _migrate(url: str) -> None:
    db = create_database(Settings(database_url=url).database)
    try:
        await upgrade(db.engine)
    finally:
        await db.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file; each test gets a copy (migrating per test would dominate the run)."""
    path = tmp_path_factory.mktemp("sqlite-template") / "template.sqlite3"
    asyncio.run(_migrate(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """A database of its own for this test session, migrated once; tables are emptied per test."""
    name = f"memchat_test_{uuid.uuid4().hex[:10]}"

    async def _create() -> None:
        admin = create_async_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        await admin.dispose()

    async def _drop() -> None:
        admin = create_async_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()

    asyncio.run(_create())
    url = _with_database(POSTGRES_URL, name)
    asyncio.run(_migrate(url))
    yield url
    asyncio.run(_drop())


async def _truncate_postgres(url: str) -> None:
    engine = create_async_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    async with engine.begin() as conn:
        await conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    await engine.dispose()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        path = tmp_path / "memchat.sqlite3"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite+aiosqlite:///{path}"
    url: str = request.getfixturevalue("postgres_database")
    asyncio.run(_truncate_postgres(url))
    return url


STUCK_TASK_WAIT_S = 10.0


@pytest.fixture(autouse=True)
def _tasks_end_with_their_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """An async test's tasks still running at its end are cancelled; one that has not ended 10 s after
    its cancel is reported (a warning naming the test and the task) and let go, so that the test's loop
    can close: pytest-asyncio's own close waits for such a task for ever and stops the whole run."""
    if request.node.get_closest_marker("asyncio") is None:
        yield
        return
    runner = request.getfixturevalue("_function_scoped_runner")
    yield
    loop = runner.get_loop()
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not pending:
        return
    for task in pending:
        task.cancel()
    _, stuck = loop.run_until_complete(asyncio.wait(pending, timeout=STUCK_TASK_WAIT_S))
    for task in stuck:
        warnings.warn(f"{request.node.nodeid}: a task ignored its cancel: {task!r}", stacklevel=1)
        asyncio.tasks._unregister_task(task)  # noqa: SLF001 - the loop's close would wait for it


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[TestUpstream]:
    with TestUpstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: TestUpstream) -> Iterator[TestUpstream]:
    upstream_server.reset()
    yield upstream_server
    upstream_server.release()


@pytest.fixture
def settings(database_url: str, upstream: TestUpstream, tmp_path: Path) -> Settings:
    return make_settings(database_url, upstream, tmp_path)


@pytest.fixture
def sqlite_url(sqlite_template: Path, tmp_path: Path) -> str:
    """A migrated SQLite database of this test's own (for what only SQLite does)."""
    path = tmp_path / "memchat.sqlite3"
    shutil.copy(sqlite_template, path)
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture
def postgres_url(postgres_database: str) -> str:
    """The session's PostgreSQL database, emptied (for what only PostgreSQL does)."""
    asyncio.run(_truncate_postgres(postgres_database))
    return postgres_database


def make_settings(database_url: str, upstream: TestUpstream, tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        data_dir=tmp_path / "data",
        llm_base_url=upstream.base_url,
        llm_api_key="test-key",
        llm_model="test-model",
        llm_max_retries=0,
        jwt_secret="test-secret-for-memchat-tests-0123456789",
        chat_rate_limit_per_minute=0,
        web_dist_dir=tmp_path / "no-console",
        gc_freeze_on_start=False,  # one test turns it on; a full collection per app start is slow
    )


@dataclass
class Running:
    app: FastAPI
    client: httpx.AsyncClient
    base_url: str

    @property
    def state(self) -> AppState:
        state: AppState = self.app.state.memchat
        return state

    @property
    def db(self) -> Database:
        return self.state.db

    async def settle(self) -> None:
        """Wait until every turn's save and extraction has run."""
        await self.state.background.drain()


async def start_server(app: FastAPI) -> tuple[uvicorn.Server, "asyncio.Task[None]", str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.005)
    return server, task, f"http://127.0.0.1:{port}"


@asynccontextmanager
async def serve_app(settings: Settings, **overrides: Any) -> AsyncIterator[Running]:
    """The app (with some settings changed, by flat name) behind a real uvicorn on loopback."""
    app = create_app(settings.replace(**overrides) if overrides else settings)
    server, task, base_url = await start_server(app)
    # verify=False in every client of the tests: the servers are plain HTTP on loopback, and httpx
    # otherwise builds a TLS context for each client, reading the CA bundle (~30 ms of CPU per client).
    async with httpx.AsyncClient(base_url=base_url, timeout=30, verify=False) as client:
        yield Running(app=app, client=client, base_url=base_url)
    server.should_exit = True
    await task


@pytest.fixture
async def running(settings: Settings) -> AsyncIterator[Running]:
    """The app behind a real uvicorn on loopback (streams and disconnects behave as in production)."""
    async with serve_app(settings) as served:
        yield served


class WriteLock:
    """Another connection holding the database's write lock (SQLite) or a table lock (PostgreSQL)."""

    def __init__(self, database_url: str, table: str):
        self._url = database_url
        self._table = table
        self._sqlite: sqlite3.Connection | None = None
        self._postgres: asyncpg.Connection | None = None

    async def acquire(self) -> "WriteLock":
        if self._url.startswith("sqlite"):
            self._sqlite = sqlite3.connect(self._url.split(":///", 1)[1], isolation_level=None)
            self._sqlite.execute("BEGIN IMMEDIATE")
        else:
            self._postgres = await asyncpg.connect(self._url.replace("postgresql+asyncpg://", "postgresql://"))
            await self._postgres.execute("BEGIN")
            await self._postgres.execute(f'LOCK TABLE "{self._table}" IN EXCLUSIVE MODE')
        return self

    async def release(self) -> None:
        if self._sqlite is not None:
            self._sqlite.execute("ROLLBACK")
            self._sqlite.close()
            self._sqlite = None
        if self._postgres is not None:
            await self._postgres.execute("ROLLBACK")
            await self._postgres.close()
            self._postgres = None


async def hold_write_lock(database_url: str, table: str = "messages") -> WriteLock:
    return await WriteLock(database_url, table).acquire()


# --- factories ---


async def signup(client: httpx.AsyncClient, email: str | None = None, password: str = "correct horse 1") -> str:
    response = await client.post(
        "/api/auth/signup", json={"email": email or f"u{uuid.uuid4().hex[:8]}@example.com", "password": password}
    )
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def create_agent(client: httpx.AsyncClient, token: str, **fields: Any) -> dict[str, Any]:
    body = {"name": "小林", "handle": "@lin", **fields}
    response = await client.post("/api/agents", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    agent: dict[str, Any] = response.json()
    return agent


def chat_body(agent_id: str | None, text: str, *, message_id: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chat-1",
        "trigger": "submit-message",
        "messages": [
            {
                "id": message_id or f"m-{uuid.uuid4().hex[:10]}",
                "role": "user",
                "parts": [{"type": "text", "text": text}],
            }
        ],
        **extra,
    }
    if agent_id is not None:
        body["agentId"] = agent_id
    return body


async def chat(running: Running, token: str, agent_id: str | None, text: str, **extra: Any) -> httpx.Response:
    response = await running.client.post("/api/chat", json=chat_body(agent_id, text, **extra), headers=auth(token))
    await running.settle()
    return response


@pytest.fixture
async def user_token(running: Running) -> str:
    return await signup(running.client)


@pytest.fixture
async def agent(running: Running, user_token: str) -> dict[str, Any]:
    return await create_agent(running.client, user_token)


@pytest.fixture
def sync_server(settings: Settings) -> Iterator[dict[str, Any]]:
    """The app on a real uvicorn in a thread, for synchronous (hypothesis) tests."""
    import threading

    app = create_app(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    import time

    deadline = time.monotonic() + 180  # generous: several test workers share a small machine
    while not server.started:
        assert thread.is_alive(), "the app stopped while starting"
        assert time.monotonic() < deadline, "the app did not start"
        time.sleep(0.01)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30, verify=False) as client:
        email = f"p{uuid.uuid4().hex[:8]}@example.com"
        token = client.post("/api/auth/signup", json={"email": email, "password": "password-1"}).json()["token"]
        client.headers["Authorization"] = f"Bearer {token}"
        agent_id = client.post("/api/agents", json={"name": "a"}).json()["id"]
        yield {"client": client, "agent_id": agent_id}
    server.should_exit = True
    thread.join(timeout=20)


from tests.serve import server  # noqa: E402  (the subprocess fixture, shared by the tests that kill or fuzz it)

__all__ = ["server"]


async def race_while_held(upstream: TestUpstream, requests: list[Any]) -> list[httpx.Response]:
    """Send requests at once; the upstream holds the first reply after its first delta (script it with
    hold_after=1), so whichever request wins keeps its turn open until every other one has answered."""
    tasks = [asyncio.ensure_future(request) for request in requests]
    assert await asyncio.to_thread(upstream.wait_stream_started)
    pending = set(tasks)
    while len(pending) > 1:  # the winner's body cannot end before the release
        _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    upstream.release()
    return [await task for task in tasks]
