"""A stalled owner (its `memchat serve` frozen with SIGSTOP past its lease) whose turn is meanwhile
retried or edited through another instance, on PostgreSQL with Redis: when it wakes it stores
nothing, and its client is not told "success" on either wire format."""

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import select, text

from memchat.clock import now_ms
from memchat.db.engine import Database, create_database
from memchat.models import Message
from memchat.models.message import SUPERSEDED
from memchat.settings import Settings
from tests.conftest import auth, chat_body
from tests.serve import Server, redis_url
from tests.test_many_instances import first_user, started
from tests.upstream import Reply, TestUpstream


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[Database]:
    database = create_database(Settings(_env_file=None, database_url=postgres_url).database)
    yield database
    await database.dispose()


async def _lease_has_run_out(db: Database, client_id: str) -> None:
    """Wait (bounded) until the frozen owner's lease on the message is over: the database's say."""
    for _ in range(200):
        async with db.read() as session:
            lease = (
                await session.execute(select(Message.turn_lease_until_ms).where(Message.client_message_id == client_id))
            ).scalar_one()
        if lease is not None and lease < now_ms():
            return
        await asyncio.sleep(0.05)  # polling the database's lease, bounded; no event tells when it ends
    raise AssertionError("the lease never ran out")


async def _owner_unreachable(db: Database, client_id: str) -> None:
    """Wait (bounded) until the frozen owner's lease is over in the database and its liveness in
    Redis has run out too (the two are renewed at different moments, so the key may outlive the
    lease): a stop finds no live turn to ask."""
    await _lease_has_run_out(db, client_id)
    redis = Redis.from_url(redis_url())
    try:
        for _ in range(400):
            if not await redis.keys("memchat:alive:*"):
                return
            await asyncio.sleep(0.05)  # polling the key's expiry, bounded; no event tells when it ends
    finally:
        await redis.aclose()
    raise AssertionError("the owner's liveness never ran out")


@asynccontextmanager
async def _owner_frozen_mid_reply(
    client: httpx.AsyncClient, upstream: TestUpstream, owner: Server, body: dict[str, object], token: str
) -> AsyncIterator[None]:
    """The owner streams the reply's first part over plain text and is frozen (SIGSTOP) for the
    block; then it wakes, the upstream sends the rest, and its client's body must break off: the
    owner stores nothing and never ends the reply as a success."""
    async with client.stream("POST", f"{owner.url}/api/chat", json=body, headers=auth(token)) as stalled:
        chunks = stalled.aiter_text()
        assert "旧" in await anext(chunks)
        os.kill(_process(owner), signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(_process(owner), signal.SIGCONT)
        upstream.release()
        with pytest.raises(httpx.RemoteProtocolError):  # not a success: the body breaks off
            await _read_to_the_end(chunks)


async def _read_to_the_end(chunks: AsyncIterator[str]) -> str:
    return "".join([chunk async for chunk in chunks])


def _process(server: Server) -> int:
    assert server.process is not None
    return server.process.pid


@pytest.mark.parametrize("wire", ["plain", "ui"])
@pytest.mark.parametrize("takeover", ["retry", "edit"])
async def test_a_stalled_owner_stores_nothing_and_does_not_end_as_a_success(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database, wire: str, takeover: str
) -> None:
    async with started(postgres_url, upstream, tmp_path) as (a, b):
        token, agent = await first_user(a)
        upstream.script(Reply(deltas=["旧", "的回答"], hold_after=1), Reply(text="新的回答"))
        path = "/api/chat" if wire == "plain" else "/api/ui/chat"
        body = chat_body(str(agent["id"]), "你好", message_id="m-1")
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            async with client.stream("POST", f"{a.url}{path}", json=body, headers=auth(token)) as stalled:
                chunks = stalled.aiter_text()
                seen = ""
                while "旧" not in seen:  # the first text (the UI stream's `start` part comes before it)
                    seen += await anext(chunks)
                os.kill(_process(a), signal.SIGSTOP)
                try:
                    await _lease_has_run_out(db, "m-1")
                    if takeover == "retry":
                        again = body
                    else:
                        again = chat_body(str(agent["id"]), "改过了", message_id="m-1", messageId="m-1")
                    answer = await client.post(f"{b.url}/api/chat", json=again, headers=auth(token))
                    assert answer.status_code == 200, answer.text
                    assert answer.text == "新的回答"
                finally:
                    os.kill(_process(a), signal.SIGCONT)
                upstream.release()
                rest = ""
                broke = False
                try:
                    async for chunk in chunks:
                        rest += chunk
                except httpx.RemoteProtocolError:
                    broke = True
        if wire == "plain":
            assert broke, f"the plain text stream ended cleanly: {rest!r}"
        else:
            parts = [json.loads(line[6:]) for line in rest.splitlines() if line.startswith("data: {")]
            types = [part["type"] for part in parts]
            assert "finish" not in types, types
            assert "error" in types, types
            codes = [part["data"]["code"] for part in parts if part["type"] == "data-error"]
            assert codes == ["turn_taken_over"]

    async with db.read() as session:
        rows = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
    live = [(m.role, m.content) for m in rows if m.status != SUPERSEDED]
    expected_user = "你好" if takeover == "retry" else "改过了"
    assert live == [("user", expected_user), ("assistant", "新的回答")]
    assert [m.content for m in rows if m.role == "assistant"] == ["新的回答"]  # the stalled reply never stored


async def test_a_stop_that_reaches_no_owner_takes_the_turn_and_the_owner_stores_nothing(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database
) -> None:
    async with started(postgres_url, upstream, tmp_path) as (a, b):
        token, agent = await first_user(a)
        upstream.script(Reply(deltas=["旧", "的回答"], hold_after=1), Reply(text="重答"))
        body = chat_body(str(agent["id"]), "你好", message_id="m-1")
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            async with _owner_frozen_mid_reply(client, upstream, a, body, token):
                await _owner_unreachable(db, "m-1")
                stop = await client.post(f"{b.url}/api/chat/{agent['id']}/stop", headers=auth(token))
                assert stop.status_code == 204
            async with db.read() as session:
                rows = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
            assert [(m.role, m.content, m.reply_state) for m in rows] == [("user", "你好", "interrupted")]
            # a retry answers it again, once
            again = await client.post(f"{b.url}/api/chat", json=body, headers=auth(token))
            assert again.text == "重答"
    async with db.read() as session:
        rows = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
    assert [(m.role, m.content) for m in rows] == [("user", "你好"), ("assistant", "重答")]


async def test_a_stop_whose_frozen_owner_still_looks_alive_takes_the_turn_after_its_wait(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database
) -> None:
    """The owner freezes while its liveness in Redis still runs (a long lease here): the stop reaches
    a turn that looks alive, asks its owner to stop, and hears nothing back within its wait (the save
    deadline and a margin). It then takes the turn in the database as for an owner it cannot reach,
    so the owner, when it wakes, stores nothing and its client is not told "success"."""
    env = {"MEMCHAT_TURN_LEASE_S": "60", "MEMCHAT_SAVE_DEADLINE_S": "1"}
    async with started(postgres_url, upstream, tmp_path, **env) as (a, b):
        token, agent = await first_user(a)
        upstream.script(Reply(deltas=["旧", "的回答"], hold_after=1), Reply(text="重答"))
        body = chat_body(str(agent["id"]), "你好", message_id="m-1")
        async with httpx.AsyncClient(timeout=60, verify=False) as client:
            async with _owner_frozen_mid_reply(client, upstream, a, body, token):
                stop = await client.post(f"{b.url}/api/chat/{agent['id']}/stop", headers=auth(token))
                assert stop.status_code == 204
                async with db.read() as session:
                    states = (await session.execute(select(Message.reply_state))).scalars().all()
                assert states == ["interrupted"]  # taken, though its lease runs for another minute
            again = await client.post(f"{b.url}/api/chat", json=body, headers=auth(token))
            assert again.text == "重答"
    async with db.read() as session:
        rows = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
    assert [(m.role, m.content) for m in rows] == [("user", "你好"), ("assistant", "重答")]


async def _waiting_on_a_lock(db: Database, count: int) -> None:
    """Wait (bounded) until `count` sessions of this database wait for a lock: the database's say."""
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    for _ in range(400):
        async with db.read() as session:
            if (await session.execute(query)).scalar_one() >= count:
                return
        await asyncio.sleep(0.05)  # polling pg_stat_activity, bounded; no event tells when a lock is awaited
    raise AssertionError(f"{count} sessions never waited for a lock")


async def _lease_of(db: Database, client_id: str) -> int:
    async with db.read() as session:
        lease = (
            await session.execute(select(Message.turn_lease_until_ms).where(Message.client_message_id == client_id))
        ).scalar_one()
    assert lease is not None
    return int(lease)


async def test_a_regenerate_racing_a_save_held_open_past_the_lease_leaves_one_live_reply(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database
) -> None:
    """The owner's commit point 2 is held open (another transaction holds the agent's row, as a
    concurrent save of another conversation can) past the lease it had, and a regenerate of the
    same turn arrives through another instance meanwhile: one of them wins, never both (two live
    replies)."""
    async with started(postgres_url, upstream, tmp_path) as (a, b):
        token, agent = await first_user(a)
        upstream.script(Reply(deltas=["旧", "的回答"], hold_after=1), Reply(text="重新生成的回答"))
        body = chat_body(str(agent["id"]), "你好", message_id="m-1")
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            async with client.stream("POST", f"{a.url}/api/chat", json=body, headers=auth(token)) as first:
                chunks = first.aiter_text()
                assert "旧" in await anext(chunks)
                async with db.read() as session:
                    conversation_id = (
                        await session.execute(select(Message.conversation_id).where(Message.client_message_id == "m-1"))
                    ).scalar_one()
                regenerate_body = chat_body(
                    str(agent["id"]), "你好", trigger="regenerate-message", conversationId=conversation_id
                )
                async with db.engine.connect() as holder:
                    locked = await holder.begin()
                    # the agent's row, which commit point 2 updates last (the agent list's preview)
                    await holder.execute(text("SELECT id FROM agents WHERE id = :id FOR UPDATE"), {"id": agent["id"]})
                    upstream.release()  # the reply ends: its save waits for the agent's row
                    await _waiting_on_a_lock(db, 1)
                    held_past = await _lease_of(db, "m-1")
                    while now_ms() <= held_past:  # the hold outlasts the lease the save started with
                        await asyncio.sleep(0.05)
                    regenerate = asyncio.ensure_future(
                        client.post(f"{b.url}/api/chat", json=regenerate_body, headers=auth(token))
                    )
                    # the save, the owner's lease renewal (behind the save's hold on the user message's
                    # row) and the regenerate all wait now
                    await _waiting_on_a_lock(db, 3)
                    await locked.rollback()
                try:
                    await _read_to_the_end(chunks)
                except httpx.RemoteProtocolError:
                    pass  # the owner lost the turn: its body breaks off (the other test checks how)
                again = await regenerate
        assert again.status_code in (200, 409), again.text

    async with db.read() as session:
        rows = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
    live = [(m.role, m.content, m.reply_to_id) for m in rows if m.status != SUPERSEDED]
    users = [m.id for m in rows if m.role == "user" and m.status != SUPERSEDED]
    assert [role for role, _, _ in live] == ["user", "assistant"], live  # one live reply, never two
    assert live[1][2] == users[0]
