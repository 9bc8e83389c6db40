"""Hostile upstreams and hostile input on one instance: no silent loss, no 500, no unbounded work."""

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from memchat.models import Conversation, Message
from memchat.models.message import REPLY_DONE
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, chat_body, create_agent, hold_write_lock, serve_app, signup
from tests.upstream import Reply, TestUpstream


async def live_messages(running: Running) -> list[tuple[str, str, str]]:
    async with running.db.read() as session:
        rows = (
            await session.execute(select(Message).where(Message.status != "superseded").order_by(Message.seq))
        ).scalars()
        return [(m.role, m.content, m.status) for m in rows]


async def message_count(running: Running) -> int:
    async with running.db.read() as session:
        return sum((await session.execute(select(Conversation.message_count))).scalars())


# --- 1. a reply the database cannot store is never a complete 200 ---


async def test_a_reply_that_cannot_be_stored_fails_the_stream_and_is_stored_once_the_database_frees(
    settings: Settings, database_url: str, upstream: TestUpstream
) -> None:
    overrides = {"sqlite_busy_timeout_ms": 100, "database_lock_timeout_ms": 100, "save_deadline_s": 1.0}
    async with serve_app(settings, **overrides) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        upstream.script(Reply(deltas=["第一", "第二"], hold_after=1))
        body = chat_body(agent["id"], "你好", message_id="m-locked")
        received: list[str] = []
        locks = []

        async def read_the_stream() -> None:
            async with running.client.stream("POST", "/api/chat", json=body, headers=auth(token)) as response:
                assert response.status_code == 200
                async for text in response.aiter_text():
                    received.append(text)
                    if not locks:  # commit point 1 is done: now nobody else can write
                        locks.append(await hold_write_lock(database_url))
                        upstream.release()

        with pytest.raises(httpx.RemoteProtocolError):
            await read_the_stream()
        [lock] = locks
        assert "".join(received) == "第一第二"  # the client saw the text, and that the turn failed
        await lock.release()
        await running.settle()  # the relay kept the reply and stored it once the lock was gone
        assert await live_messages(running) == [("user", "你好", "completed"), ("assistant", "第一第二", "completed")]
        assert await message_count(running) == 2
        async with running.db.read() as session:
            user = (await session.execute(select(Message).where(Message.role == "user"))).scalar_one()
        assert user.reply_state == REPLY_DONE
        retry = await running.client.post("/api/chat", json=body, headers=auth(token))
        assert retry.text == "第一第二"  # the stored reply, no second turn
        assert len(upstream.chat_requests) == 1


# --- 2. an edit while a later turn streams ---


async def test_editing_while_a_later_turn_streams_is_409_and_leaves_no_orphan(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="回答一"), Reply(deltas=["回答", "二"], hold_after=1))
    await chat(running, user_token, agent["id"], "第一句", message_id="m1")
    body = chat_body(agent["id"], "第二句", message_id="m2")
    async with running.client.stream("POST", "/api/chat", json=body, headers=auth(user_token)) as response:
        chunks = response.aiter_text()
        assert await anext(chunks) == "回答"
        edit = await running.client.post(
            "/api/chat",
            json=chat_body(agent["id"], "改过的第一句", message_id="m1", messageId="m1"),
            headers=auth(user_token),
        )
        assert edit.status_code == 409
        assert edit.json()["error"]["code"] == "turn_in_progress"
        upstream.release()
        assert "".join([c async for c in chunks]) == "二"
    await running.settle()
    assert await live_messages(running) == [
        ("user", "第一句", "completed"),
        ("assistant", "回答一", "completed"),
        ("user", "第二句", "completed"),
        ("assistant", "回答二", "completed"),
    ]
    assert await message_count(running) == 4


# --- 3. a reused message id or Idempotency-Key with another text ---


@pytest.mark.parametrize("via", ["message id", "Idempotency-Key"])
async def test_a_reused_id_with_another_text_is_422_never_a_replay(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream, via: str
) -> None:
    upstream.script(Reply(text="你好呀"))

    def send(text: str) -> dict[str, Any]:
        if via == "message id":
            return {"json": chat_body(agent["id"], text, message_id="m1"), "headers": auth(user_token)}
        headers = {**auth(user_token), "Idempotency-Key": "key-1"}
        return {"json": chat_body(agent["id"], text), "headers": headers}

    first = await running.client.post("/api/chat", **send("你好"))
    assert first.text == "你好呀"
    await running.settle()
    reused = await running.client.post("/api/chat", **send("我喜欢猫"))
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "message_id_reused"
    assert await live_messages(running) == [("user", "你好", "completed"), ("assistant", "你好呀", "completed")]
    assert len(upstream.chat_requests) == 1


# --- 4. lone surrogates in JSON strings ---

LONE = ["\\ud800", "\\udfff"]


def _raw_chat(agent_id: str | None, text: str, **extra: Any) -> bytes:
    body = json.dumps(chat_body(agent_id, "PLACEHOLDER", message_id="m-s", **extra), ensure_ascii=True)
    return body.replace("PLACEHOLDER", text).encode()


@pytest.mark.parametrize("escape", LONE)
async def test_lone_surrogates_are_a_422_naming_the_field_and_store_nothing(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream, escape: str
) -> None:
    headers = {**auth(user_token), "Content-Type": "application/json"}
    cases = [
        (_raw_chat(agent["id"], escape), "messages.0.parts.0.text"),
        (_raw_chat(None, f"hi{escape}"), "messages.0.parts.0.text"),  # the stateless path
        (
            _raw_chat(agent["id"], "你好", conversation={"name": "X"}).replace(b'"X"', f'"{escape}"'.encode()),
            "conversation.name",
        ),
        (_raw_chat(agent["id"], "你好").replace(b'"m-s"', f'"m{escape}"'.encode()), "messages.0.id"),
    ]
    for raw, field in cases:
        response = await running.client.post("/api/chat", content=raw, headers=headers)
        assert response.status_code == 422, raw
        assert field in response.json()["error"]["message"]
    # the same connection still answers (a 500 used to drop the keep-alive connection)
    assert (await running.client.get(f"/api/agents/{agent['id']}", headers=auth(user_token))).status_code == 200
    other = [
        ("/api/agents", b'{"name": "N"}', b'"N"'),
        (f"/api/agents/{agent['id']}/memories", b'{"type": "preference", "content": "C", "importance": 3}', b'"C"'),
        ("/api/auth/signup", b'{"email": "s@example.com", "password": "P-password"}', b'"P-password"'),
    ]
    for path, raw, value in other:
        response = await running.client.post(
            path, content=raw.replace(value, f'"x{escape}x-long"'.encode()), headers=headers
        )
        assert response.status_code == 422, path
    assert await live_messages(running) == []
    assert upstream.chat_requests == []
    # and a retry of an existing message with a surrogate is refused the same way
    upstream.script(Reply(text="好"))
    await chat(running, user_token, agent["id"], "你好", message_id="m-s")
    retry = await running.client.post("/api/chat", content=_raw_chat(agent["id"], f"你好{escape}"), headers=headers)
    assert retry.status_code == 422
    assert len(await live_messages(running)) == 2


# --- 5. an upstream event that never ends ---


async def test_an_upstream_event_over_the_limit_is_a_clear_upstream_error(
    settings: Settings, upstream: TestUpstream
) -> None:
    async with serve_app(settings, llm_max_event_bytes=64 * 1024) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        delta = json.dumps({"choices": [{"index": 0, "delta": {"content": "长" * 100_000}}]})
        upstream.script(Reply(raw=b"data: " + delta.encode() + b"\n\ndata: [DONE]\n\n"))
        response = await chat(running, token, agent["id"], "你好")
        assert response.status_code == 502
        assert response.json()["error"]["code"] == "upstream_event_too_large"
        assert await live_messages(running) == [("user", "你好", "completed")]


# --- 6. a reply that streams forever ---


async def test_a_reply_stops_at_the_deadline_and_is_stored_incomplete(
    settings: Settings, upstream: TestUpstream
) -> None:
    async with serve_app(settings, llm_reply_deadline_s=1.0) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        upstream.script(Reply(deltas=[f"{i}," for i in range(40)], delay_ms=100))
        response = await chat(running, token, agent["id"], "讲个很长的故事")
        assert response.status_code == 200
        assert response.text.startswith("0,1,")
        assert len(response.text) < len("".join(f"{i}," for i in range(40)))
        stored = await live_messages(running)
        assert stored[1] == ("assistant", response.text, "incomplete")


# --- 7. a reply too large to keep ---


async def test_a_reply_is_cut_at_the_cap_and_history_takes_a_bounded_share_of_the_prompt(
    settings: Settings, upstream: TestUpstream
) -> None:
    async with serve_app(settings, max_reply_chars=1000, max_history_message_chars=300) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        upstream.script(Reply(deltas=["甲" * 600, "乙" * 600, "丙" * 600]), Reply(text="好"))
        response = await chat(running, token, agent["id"], "写长一点")
        assert response.text == "甲" * 600 + "乙" * 400
        assert (await live_messages(running))[1] == ("assistant", "甲" * 600 + "乙" * 400, "incomplete")
        await chat(running, token, agent["id"], "再来")
        history = upstream.chat_requests[1]["messages"]
        assert {"role": "assistant", "content": "甲" * 300} in history
        assert max(len(m["content"]) for m in history[2:]) <= 300


# --- 8. a chunked body over the limit ---


async def test_a_chunked_body_over_the_limit_is_413_like_one_with_a_length(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    limit = running.state.settings.limits.max_request_bytes

    async def chunks(data: bytes) -> AsyncIterator[bytes]:
        for start in range(0, len(data), 64 * 1024):
            yield data[start : start + 64 * 1024]

    big = json.dumps(chat_body(agent["id"], "长" * limit)).encode()
    headers = {**auth(user_token), "Content-Type": "application/json"}
    response = await running.client.post("/api/chat", content=chunks(big), headers=headers)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    small = json.dumps(chat_body(agent["id"], "你好")).encode()
    upstream.script(Reply(text="收到"))
    response = await running.client.post("/api/chat", content=chunks(small), headers=headers)
    assert response.status_code == 200
    assert response.text == "收到"
