"""Micro-benchmarks of the pieces the profiles point at, each against a lighter way to do the same.

    python -m bench.micro

- the openai SDK's request-parameter transform for a turn's prompt, vs orjson.dumps of it;
- the SDK's parsing of one streamed chunk (json + construct_type), vs orjson and a dict lookup;
- one ORM SELECT through SQLAlchemy + aiosqlite, a driver-level statement through aiosqlite,
  a read transaction through an AsyncSession, vs the same SELECT with the stdlib sqlite3 module;
- HS256 JWT decode (PyJWT);
- the turn's commit point 1 as it runs now (one call on memchat's SQLite thread), and a full GC.
Runs in a temporary folder; nothing touches the network.

    python -m bench.micro --postgresql postgresql+asyncpg://postgres@127.0.0.1:5432/test

the turn's transactions on that PostgreSQL database instead (it must be empty: its tables are made;
loopback only): an empty one, one SELECT, commit point 1, and prepare_turn.
"""

import argparse
import asyncio
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import jwt
import orjson
from openai._models import construct_type
from openai._utils._transform import async_maybe_transform
from openai.types.chat import ChatCompletionChunk, completion_create_params
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from bench.mock_upstream import build_frames
from memchat.models import Agent, Base

_LINE = "我们聊到周末去哪里散步，公园里的银杏叶已经黄了。"


def prompt(history: int = 20) -> list[dict[str, str]]:
    messages = [
        {"role": "system", "content": "你是 AI Agent Web 控制台里的聊天陪伴助手。" * 8},
        {"role": "user", "content": "聊天对象：bench（bench）\n对象状态：，\n关系阶段："},
    ]
    messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": _LINE} for i in range(history)]
    messages.append({"role": "user", "content": "hello"})
    return messages


def _report(name: str, seconds: float, n: int) -> None:
    per = seconds / n
    unit, scale = ("ms", 1e3) if per >= 1e-3 else ("µs", 1e6)
    print(f"{name:<62} {per * scale:9.2f} {unit}")


async def _time_async(name: str, fn: Callable[[], Awaitable[Any]], n: int) -> None:
    for _ in range(min(50, n)):
        await fn()
    started = time.perf_counter()
    for _ in range(n):
        await fn()
    _report(name, time.perf_counter() - started, n)


def _time(name: str, fn: Callable[[], Any], n: int) -> None:
    for _ in range(min(50, n)):
        fn()
    started = time.perf_counter()
    for _ in range(n):
        fn()
    _report(name, time.perf_counter() - started, n)


async def upstream_costs() -> None:
    params = {"messages": prompt(), "model": "default", "stream": True}
    target = completion_create_params.CompletionCreateParamsStreaming

    async def transform() -> None:
        await async_maybe_transform(params, target)

    await _time_async("openai SDK: transform request params (23 messages)", transform, 300)
    _time("orjson.dumps of the same params", lambda: orjson.dumps(params), 3000)
    event = build_frames(2)[1].split(b"\r\n")[1].split(b"\n\n")[0].removeprefix(b"data: ")

    def sdk_chunk() -> None:
        chunk = construct_type(type_=ChatCompletionChunk, value=json.loads(event))
        assert isinstance(chunk, ChatCompletionChunk)

    def orjson_chunk() -> None:
        data = orjson.loads(event)
        assert data["choices"][0]["delta"].get("content")

    _time("openai SDK: parse one streamed chunk (json + construct_type)", sdk_chunk, 5000)
    _time("orjson.loads of the same chunk + delta lookup", orjson_chunk, 20000)


async def sqlite_costs(folder: str) -> None:
    path = os.path.join(folder, "micro.sqlite3")
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
        await conn.execute(
            Base.metadata.tables["users"]
            .insert()
            .values(id="u", email="e", password_hash="h", display_name=None, created_at_ms=1)
        )
        await conn.execute(
            Base.metadata.tables["agents"]
            .insert()
            .values(id="a", user_id="u", name="n", handle="", created_at_ms=1, updated_at_ms=1)
        )
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    query = select(Agent).where(Agent.id == "a", Agent.user_id == "u")
    async with sessions() as session:

        async def orm_select() -> None:
            (await session.execute(query)).scalar_one()

        await _time_async("SQLAlchemy ORM select(Agent) via aiosqlite", orm_select, 500)
    async with engine.connect() as conn:

        async def driver_select() -> None:
            (await conn.exec_driver_sql("SELECT 1")).scalar()

        await _time_async("driver-level SELECT 1 via aiosqlite (one thread hop)", driver_select, 500)

    async def read_transaction() -> None:
        async with sessions() as session, session.begin():
            await session.execute(text("SELECT 1"))

    await _time_async("AsyncSession: begin + SELECT 1 + commit + close", read_transaction, 300)
    await engine.dispose()
    raw = sqlite3.connect(path)
    _time(
        "stdlib sqlite3: the same agent SELECT",
        lambda: raw.execute("SELECT * FROM agents WHERE id = ? AND user_id = ?", ("a", "u")).fetchone(),
        5000,
    )
    raw.close()


async def turn_transaction_costs(folder: str, database_url: str | None = None) -> None:
    """Commit point 1 as the turn runs it (Database.run_write on memchat's SQLite thread, or on
    PostgreSQL at `database_url`), and the GC."""
    from memchat.app import build_chat_services
    from memchat.auth.repository import users
    from memchat.background import BackgroundTasks
    from memchat.chat.intent import read_intent
    from memchat.chat.schemas import ChatRequest
    from memchat.chat.turn import prepare_turn
    from memchat.chat.user_message import TurnClaim, store_user_side
    from memchat.clock import now_ms
    from memchat.conversations.repository import agents
    from memchat.db.engine import create_database
    from memchat.db.migrate import upgrade
    from memchat.llm.client import LLMClient
    from memchat.models.base import new_id
    from memchat.schemas import PROFILE_FIELDS
    from memchat.settings import Settings

    settings = Settings(
        _env_file=None,
        database_url=database_url or f"sqlite+aiosqlite:///{os.path.join(folder, 'turn.sqlite3')}",
        data_dir=folder,
        jwt_secret="s" * 48,
    )
    db = create_database(settings.database)
    await upgrade(db.engine)
    user_id, agent_id = new_id(), new_id()

    def seed(conn: Any) -> None:
        conn.execute(users.insert().values(id=user_id, email="e", password_hash="h", created_at_ms=1))
        conn.execute(
            agents.insert().values(
                id=agent_id,
                user_id=user_id,
                name="bench",
                handle="",
                default_prompt="你好" * 50,
                created_at_ms=1,
                updated_at_ms=1,
                **dict.fromkeys(PROFILE_FIELDS, ""),
            )
        )

    await db.run_write(seed)
    llm = LLMClient(
        base_url="http://127.0.0.1:9/v1", api_key="x", model="m", connect_timeout_s=1, read_timeout_s=1, max_retries=0
    )
    services = build_chat_services(settings, db, llm, None, BackgroundTasks())

    def intent() -> Any:
        body = {
            "agentId": agent_id,
            "messages": [{"id": new_id(), "role": "user", "parts": [{"type": "text", "text": "今天好累"}]}],
        }
        return read_intent(ChatRequest.model_validate(body), user_id, None, services.limits)

    async def empty_transaction() -> None:
        await db.run_write(lambda conn: None)

    def claim() -> TurnClaim:
        now = now_ms()
        return TurnClaim(services.instance_id, now + 15_000, now)

    async def commit_one() -> None:
        limit = services.limits.recent_message_limit
        await db.run_write(store_user_side, intent(), claim(), limit, services.memory.read_for_prompt)

    async def whole_prepare() -> None:
        await prepare_turn(services, intent())

    async def one_select() -> None:
        await db.run_write(lambda conn: conn.execute(text("SELECT 1")).scalar())

    where = "PostgreSQL" if database_url else "thread hop"
    await _time_async(f"run_write: {where} + BEGIN + COMMIT", empty_transaction, 500)
    await _time_async(f"run_write: {where} + BEGIN + SELECT 1 + COMMIT", one_select, 500)
    await _time_async("run_write(store_user_side): commit point 1", commit_one, 500)
    await _time_async("prepare_turn: commit point 1 + recall + prompt", whole_prepare, 500)
    await llm.aclose()
    await db.dispose()
    import gc

    started = time.perf_counter()
    gc.collect()
    _report(f"gc.collect(), full, {len(gc.get_objects()):,} tracked objects", time.perf_counter() - started, 1)


def jwt_costs() -> None:
    secret = "s" * 48
    token = jwt.encode({"sub": "u", "exp": int(time.time()) + 3600}, secret, algorithm="HS256")
    _time(
        "PyJWT HS256 decode",
        lambda: jwt.decode(token, secret, algorithms=["HS256"], options={"require": ["sub", "exp"]}),
        5000,
    )


async def _main(postgresql: str | None) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} (the machine is shared: compare rows, not runs)")
    if postgresql:
        with tempfile.TemporaryDirectory(prefix="memchat-micro-") as folder:
            await turn_transaction_costs(folder, postgresql)
        return
    await upstream_costs()
    with tempfile.TemporaryDirectory(prefix="memchat-micro-") as folder:
        await sqlite_costs(folder)
        await turn_transaction_costs(folder)
    jwt_costs()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgresql", help="an empty PostgreSQL database: the turn's transactions there only")
    asyncio.run(_main(parser.parse_args().postgresql))


if __name__ == "__main__":
    main()
