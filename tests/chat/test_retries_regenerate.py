"""Idempotent sends, regenerate and edit: nothing lost, nothing doubled."""

import asyncio
from typing import Any

import pytest
from sqlalchemy import select

from memchat.models import Conversation, Message
from tests.conftest import Running, auth, chat, chat_body
from tests.memories.support import Serve, serve_fixture, user_with_agent  # noqa: F401
from tests.upstream import Reply, TestUpstream


async def live_history(running: Running, token: str, agent_id: str) -> list[tuple[str, str, str]]:
    body = (await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))).json()
    return [(m["role"], m["parts"][0]["text"], m["status"]) for m in body["messages"]]


async def stored_count(running: Running) -> tuple[int, int]:
    async with running.db.read() as session:
        conversation = (await session.execute(select(Conversation))).scalar_one()
        live = (
            (
                await session.execute(
                    select(Message).where(Message.conversation_id == conversation.id, Message.status != "superseded")
                )
            )
            .scalars()
            .all()
        )
    return conversation.message_count, len(live)


async def test_retried_send_returns_the_saved_reply(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="第一次的回答"))
    first = await chat(running, user_token, agent["id"], "你好", message_id="client-1")
    retry = await chat(running, user_token, agent["id"], "你好", message_id="client-1")
    assert first.text == retry.text == "第一次的回答"
    assert retry.status_code == 200
    assert len(upstream.chat_requests) == 1
    assert await live_history(running, user_token, agent["id"]) == [
        ("user", "你好", "completed"),
        ("assistant", "第一次的回答", "completed"),
    ]
    assert await stored_count(running) == (2, 2)


async def test_a_send_under_the_stored_message_id_is_a_retry(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    """A console that reloaded history knows the message by memchat's id, not its own."""
    upstream.script(Reply(text="只答一次"))
    await chat(running, user_token, agent["id"], "你好", message_id="client-2")
    body = (await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(user_token))).json()
    stored_id = body["messages"][0]["id"]
    assert stored_id != "client-2"
    retry = await chat(running, user_token, agent["id"], "你好", message_id=stored_id)
    assert (retry.status_code, retry.text) == (200, "只答一次")
    assert len(upstream.chat_requests) == 1
    assert await stored_count(running) == (2, 2)


async def test_two_tabs_sending_one_message_at_once_store_it_once(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="一个回答"), Reply(text="一个回答"))
    body = chat_body(agent["id"], "同时发", message_id="client-3")
    responses = await asyncio.gather(
        *(running.client.post("/api/chat", json=body, headers=auth(user_token)) for _ in range(2))
    )
    await running.settle()
    # one answers; the other replays the stored reply or is told the turn is still streaming
    assert sorted(r.status_code for r in responses) in ([200, 200], [200, 409])
    assert [r.text for r in responses if r.status_code == 200][0] == "一个回答"
    assert len(upstream.chat_requests) == 1
    assert await stored_count(running) == (2, 2)


async def test_idempotency_key_header(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    headers = {**auth(user_token), "Idempotency-Key": "key-1"}
    for message_id in ("a", "b"):  # different UI ids, same key: one turn
        await running.client.post(
            "/api/chat", json=chat_body(agent["id"], "hi", message_id=message_id), headers=headers
        )
        await running.settle()
    assert len(upstream.chat_requests) == 1
    assert await stored_count(running) == (2, 2)


async def test_retry_while_streaming_is_409(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(deltas=["慢", "慢来"], hold_after=1))
    body = chat_body(agent["id"], "你好", message_id="client-2")
    async with running.client.stream("POST", "/api/chat", json=body, headers=auth(user_token)) as response:
        chunks = response.aiter_text()
        assert await anext(chunks) == "慢"
        retry = await running.client.post("/api/chat", json=body, headers=auth(user_token))
        assert retry.status_code == 409
        assert retry.json()["error"]["code"] == "turn_in_progress"
        upstream.release()
        assert "".join([c async for c in chunks]) == "慢来"
    await running.settle()
    assert await stored_count(running) == (2, 2)


async def test_retry_after_a_failed_turn_answers_the_same_message(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(status=500), Reply(text="这次好了"))
    failed = await chat(running, user_token, agent["id"], "在吗", message_id="client-3")
    assert failed.status_code == 502
    retry = await chat(running, user_token, agent["id"], "在吗", message_id="client-3")
    assert retry.text == "这次好了"
    assert await live_history(running, user_token, agent["id"]) == [
        ("user", "在吗", "completed"),
        ("assistant", "这次好了", "completed"),
    ]
    assert await stored_count(running) == (2, 2)
    # the retried prompt has the user's text exactly once
    assert [m["content"] for m in upstream.chat_requests[1]["messages"]].count("在吗") == 1


async def test_regenerate_supersedes_the_last_reply(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="旧回答一"), Reply(text="旧回答二"), Reply(text="新回答二"))
    await chat(running, user_token, agent["id"], "问题一")
    await chat(running, user_token, agent["id"], "问题二")
    body = chat_body(agent["id"], "问题二")
    body["trigger"] = "regenerate-message"
    response = await running.client.post("/api/chat", json=body, headers=auth(user_token))
    await running.settle()
    assert response.text == "新回答二"
    assert await live_history(running, user_token, agent["id"]) == [
        ("user", "问题一", "completed"),
        ("assistant", "旧回答一", "completed"),
        ("user", "问题二", "completed"),
        ("assistant", "新回答二", "completed"),
    ]
    prompt = upstream.chat_requests[-1]["messages"]
    assert [m["content"] for m in prompt[2:]] == ["问题一", "旧回答一", "问题二"]
    assert await stored_count(running) == (4, 4)
    everything = (
        await running.client.get(f"/api/agents/{agent['id']}/messages?includeSuperseded=true", headers=auth(user_token))
    ).json()["messages"]
    assert [(m["parts"][0]["text"], m["status"]) for m in everything if m["status"] == "superseded"] == [
        ("旧回答二", "superseded")
    ]
    preview = (await running.client.get(f"/api/agents/{agent['id']}", headers=auth(user_token))).json()
    assert preview["latestMessage"] == "新回答二"


async def test_regenerate_with_nothing_stored_is_422(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    body = chat_body(agent["id"], "x")
    body["trigger"] = "regenerate-message"
    response = await running.client.post("/api/chat", json=body, headers=auth(user_token))
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "nothing_to_regenerate"


async def test_edit_replaces_the_message_and_what_followed(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="答一"), Reply(text="答二"), Reply(text="改后的答"))
    await chat(running, user_token, agent["id"], "问一", message_id="u1")
    await chat(running, user_token, agent["id"], "问二", message_id="u2")
    # The AI SDK keeps the edited message's id and sends messageId.
    response = await chat(running, user_token, agent["id"], "问一改", message_id="u1", messageId="u1")
    assert response.text == "改后的答"
    assert await live_history(running, user_token, agent["id"]) == [
        ("user", "问一改", "completed"),
        ("assistant", "改后的答", "completed"),
    ]
    assert await stored_count(running) == (2, 2)
    assert [m["content"] for m in upstream.chat_requests[-1]["messages"][2:]] == ["问一改"]


async def test_edit_of_unknown_message_is_404(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    response = await chat(running, user_token, agent["id"], "x", messageId="missing")
    assert response.status_code == 404
    assert await live_history(running, user_token, agent["id"]) == []


async def test_concurrent_sends_to_one_conversation(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    texts = [f"第{i}条" for i in range(8)]
    responses = await asyncio.gather(
        *(running.client.post("/api/chat", json=chat_body(agent["id"], t), headers=auth(user_token)) for t in texts)
    )
    await running.settle()
    assert [r.status_code for r in responses] == [200] * 8
    history = await live_history(running, user_token, agent["id"])
    assert sorted(text for role, text, _ in history if role == "user") == sorted(texts)
    assert sum(role == "assistant" for role, _, _ in history) == 8
    assert await stored_count(running) == (16, 16)


async def test_concurrent_first_use_creates_one_default_conversation(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    responses = await asyncio.gather(
        *(running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(user_token)) for _ in range(8)),
        *(
            running.client.post("/api/chat", json=chat_body(agent["id"], f"{i}"), headers=auth(user_token))
            for i in range(4)
        ),
    )
    await running.settle()
    assert {r.status_code for r in responses} == {200}
    ids = {r.json()["id"] for r in responses[:8]}
    assert len(ids) == 1
    async with running.db.read() as session:
        conversations = (await session.execute(select(Conversation))).scalars().all()
    assert [c.id for c in conversations] == list(ids)
    assert await stored_count(running) == (8, 8)


@pytest.mark.parametrize("strategy", ["rules", "digest"])
async def test_an_edit_or_a_regenerate_takes_the_replaced_turns_out_of_the_summary(
    serve: Serve, upstream: TestUpstream, strategy: str
) -> None:
    running = await serve(summary_strategy=strategy)
    token, agent_id = await user_with_agent(running)
    upstream.script(Reply(text="回答一"), Reply(text="回答二"), Reply(text="回答三"), Reply(text="回答四"))
    await chat(running, token, agent_id, "hello in the new conversation", message_id="u1")
    await chat(running, token, agent_id, "第二个问题", message_id="u2")
    await chat(running, token, agent_id, "another text", message_id="u1", messageId="u1")  # an edit of u1
    body = chat_body(agent_id, "another text")
    body["trigger"] = "regenerate-message"
    assert (await running.client.post("/api/chat", json=body, headers=auth(token))).text == "回答四"
    upstream.script(Reply(text="好的"))
    await chat(running, token, agent_id, "第三个问题", message_id="u3")
    system = upstream.chat_requests[-1]["messages"][0]["content"]
    assert "another text" in system
    assert "回答四" in system
    for replaced in ("hello in the new conversation", "回答一", "第二个问题", "回答二", "回答三"):
        assert replaced not in system  # they left history, and the summary with it
