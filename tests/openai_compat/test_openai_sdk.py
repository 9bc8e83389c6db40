"""/v1 with the official `openai` SDK against a real memchat (uvicorn on loopback, the test upstream)."""

from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest

from tests.conftest import Running, auth, create_agent, serve_app, signup
from tests.upstream import DEFAULT_REPLY, Reply, TestUpstream

MEMORY_LINE = "- [对话风格 / 重要度 3] 我叫小明"


def sdk(running: Running, token: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{running.base_url}/v1", api_key=token, max_retries=0)


@pytest.fixture
async def client(running: Running, user_token: str) -> AsyncIterator[openai.AsyncOpenAI]:
    async with sdk(running, user_token) as client:
        yield client


async def _history(running: Running, token: str, agent_id: str) -> list[tuple[str, str]]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    return [(m["role"], m["parts"][0]["text"]) for m in response.json()["messages"]]


async def test_a_conversation_with_memory_across_turns(
    running: Running, user_token: str, client: openai.AsyncOpenAI, upstream: TestUpstream
) -> None:
    agent = await create_agent(running.client, user_token)
    first = await client.chat.completions.create(
        model=agent["id"],
        messages=[{"role": "system", "content": "你是海盗。"}, {"role": "user", "content": "我叫小明"}],
    )
    assert first.choices[0].message.content == DEFAULT_REPLY
    assert first.choices[0].finish_reason == "stop"
    assert first.object == "chat.completion"
    assert first.model == agent["id"]
    assert first.usage is not None
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens > 0
    await running.settle()

    # The handle names the agent too; the client's earlier messages are not the history.
    second = await client.chat.completions.create(
        model="lin",
        messages=[
            {"role": "user", "content": "这句客户端的旧消息不进提示词"},
            {"role": "assistant", "content": "这句也不进"},
            {"role": "user", "content": [{"type": "text", "text": "你还记得"}, {"type": "text", "text": "我吗"}]},
        ],
    )
    assert second.choices[0].message.content == DEFAULT_REPLY
    prompt = upstream.chat_requests[-1]["messages"]
    assert MEMORY_LINE in prompt[0]["content"]
    assert "你是海盗" not in str(prompt)
    assert "旧消息" not in str(prompt)
    assert [(m["role"], m["content"]) for m in prompt[2:]] == [
        ("user", "我叫小明"),
        ("assistant", DEFAULT_REPLY),
        ("user", "你还记得我吗"),
    ]
    assert await _history(running, user_token, agent["id"]) == [
        ("user", "我叫小明"),
        ("assistant", DEFAULT_REPLY),
        ("user", "你还记得我吗"),
        ("assistant", DEFAULT_REPLY),
    ]
    assert second.id == f"chatcmpl-{(await _last_reply_id(running, user_token, agent['id']))}"


async def _last_reply_id(running: Running, token: str, agent_id: str) -> str:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    reply_id: str = response.json()["messages"][-1]["id"]
    return reply_id


async def test_streaming_chunks_usage_and_done(
    running: Running, user_token: str, client: openai.AsyncOpenAI, upstream: TestUpstream
) -> None:
    agent = await create_agent(running.client, user_token)
    upstream.script(Reply(deltas=["你好", "，小明", "。"]))
    stream = await client.chat.completions.create(
        model=agent["id"],
        messages=[{"role": "user", "content": "我叫小明"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert len({chunk.id for chunk in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "你好，小明。"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens > 0
    assert all(chunk.usage is None for chunk in chunks[:-1])
    await running.settle()
    assert await _history(running, user_token, agent["id"]) == [("user", "我叫小明"), ("assistant", "你好，小明。")]

    # On the wire: server-sent events, ending with [DONE]; no usage chunk unless asked for.
    body = {"model": agent["id"], "messages": [{"role": "user", "content": "再说一次"}], "stream": True}
    response = await running.client.post("/v1/chat/completions", json=body, headers=auth(user_token))
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line for line in response.text.split("\n\n") if line]
    assert events[-1] == "data: [DONE]"
    assert '"usage"' not in response.text


async def test_a_reply_that_breaks_after_its_first_text_raises_in_the_sdk(
    running: Running, user_token: str, client: openai.AsyncOpenAI, upstream: TestUpstream
) -> None:
    agent = await create_agent(running.client, user_token)
    upstream.script(Reply(deltas=["一半", "的话", "没说完"], cut_after=2))
    stream = await client.chat.completions.create(
        model=agent["id"], messages=[{"role": "user", "content": "讲个故事"}], stream=True
    )
    received: list[str] = []

    async def read_all() -> None:
        async for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")

    with pytest.raises(openai.APIError):
        await read_all()
    assert "".join(received) == "一半的话"
    await running.settle()
    history = await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(user_token))
    reply = history.json()["messages"][-1]
    assert (reply["parts"][0]["text"], reply["status"]) == ("一半的话", "incomplete")


async def test_models_are_the_callers_agents(running: Running, user_token: str, client: openai.AsyncOpenAI) -> None:
    mine = [await create_agent(running.client, user_token, name=n, handle=f"@{n}") for n in ("a", "b")]
    other = await signup(running.client, "other@example.com")
    await create_agent(running.client, other, name="theirs")
    listed = [model async for model in client.models.list()]
    assert sorted(m.id for m in listed) == sorted(a["id"] for a in mine)
    assert {m.model_extra["handle"] for m in listed if m.model_extra} == {"@a", "@b"}
    assert all(m.object == "model" and m.owned_by == "memchat" for m in listed)


async def test_errors_in_openais_shape(
    running: Running, user_token: str, client: openai.AsyncOpenAI, upstream: TestUpstream
) -> None:
    agent = await create_agent(running.client, user_token)
    other = await signup(running.client, "other@example.com")
    theirs = await create_agent(running.client, other, handle="@theirs")
    user = [{"role": "user", "content": "你好"}]

    for model in (theirs["id"], "theirs", "nobody"):
        with pytest.raises(openai.NotFoundError) as not_found:
            await client.chat.completions.create(model=model, messages=user)
        assert _error(not_found.value) == ("invalid_request_error", "model_not_found", None)

    async with sdk(running, "not-a-token") as stranger:
        with pytest.raises(openai.AuthenticationError) as unauthorized:
            await stranger.chat.completions.create(model=agent["id"], messages=user)
        assert _error(unauthorized.value)[0] == "authentication_error"
        with pytest.raises(openai.AuthenticationError):
            await stranger.models.list()

    with pytest.raises(openai.BadRequestError) as empty:
        await client.chat.completions.create(model=agent["id"], messages=[])
    assert _error(empty.value) == ("invalid_request_error", "invalid_input", "messages")
    with pytest.raises(openai.BadRequestError) as not_user:
        await client.chat.completions.create(
            model=agent["id"], messages=[*user, {"role": "assistant", "content": "在的"}]
        )
    assert _error(not_user.value)[:2] == ("invalid_request_error", "last_message_not_user")
    with pytest.raises(openai.BadRequestError) as blank:
        await client.chat.completions.create(model=agent["id"], messages=[{"role": "user", "content": " \n"}])
    assert _error(blank.value)[:2] == ("invalid_request_error", "empty_message")

    upstream.script(Reply(status=500))
    with pytest.raises(openai.APIStatusError) as failed:
        await client.chat.completions.create(model=agent["id"], messages=user)
    assert failed.value.status_code == 502
    assert _error(failed.value)[0] == "server_error"

    unknown = await running.client.get("/v1/nonexistent", headers=auth(user_token))
    assert unknown.status_code == 404
    assert set(unknown.json()["error"]) == {"message", "type", "param", "code"}
    assert len(upstream.chat_requests) == 1  # only the failed one reached the upstream


def _error(exc: openai.APIStatusError) -> tuple[Any, Any, Any]:
    body = exc.response.json()["error"]
    assert set(body) == {"message", "type", "param", "code"}
    assert body["message"]
    return body["type"], body["code"], body["param"]


async def test_rate_limit_is_a_429(settings: Any, upstream: TestUpstream) -> None:
    async with serve_app(settings, chat_rate_limit_per_minute=1) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        async with sdk(running, token) as client:
            messages = [{"role": "user", "content": "你好"}]
            await client.chat.completions.create(model=agent["id"], messages=messages)
            with pytest.raises(openai.RateLimitError) as limited:
                await client.chat.completions.create(model=agent["id"], messages=messages)
            assert _error(limited.value)[0] == "rate_limit_error"
            assert int(limited.value.response.headers["retry-after"]) > 0


async def test_the_same_idempotency_key_answers_once(
    running: Running, user_token: str, client: openai.AsyncOpenAI, upstream: TestUpstream
) -> None:
    agent = await create_agent(running.client, user_token)
    messages = [{"role": "user", "content": "只问一次"}]
    headers = {"Idempotency-Key": "retry-1"}
    first = await client.chat.completions.create(
        model=agent["id"],
        messages=messages,
        extra_headers=headers,
    )
    await running.settle()
    again = await client.chat.completions.create(
        model=agent["id"],
        messages=messages,
        extra_headers=headers,
    )
    streamed = await client.chat.completions.create(
        model=agent["id"],
        messages=messages,
        extra_headers=headers,
        stream=True,
    )
    text = "".join([c.choices[0].delta.content or "" async for c in streamed if c.choices])
    assert again.id == first.id
    assert again.choices[0].message.content == text == first.choices[0].message.content == DEFAULT_REPLY
    assert len(upstream.chat_requests) == 1
    assert await _history(running, user_token, agent["id"]) == [("user", "只问一次"), ("assistant", DEFAULT_REPLY)]


async def test_an_api_client_with_httpx_gets_the_same_turn(running: Running, user_token: str) -> None:
    """What docs/clients.md's curl example sends."""
    agent = await create_agent(running.client, user_token)
    body = {"model": agent["id"], "messages": [{"role": "user", "content": "你好"}]}
    response = await running.client.post("/v1/chat/completions", json=body, headers=auth(user_token))
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"] == {"role": "assistant", "content": DEFAULT_REPLY, "refusal": None}


async def test_an_api_key_is_an_openai_api_key(running: Running, user_token: str, upstream: TestUpstream) -> None:
    agent = await create_agent(running.client, user_token)
    made = await running.client.post("/api/keys", json={"name": "sdk"}, headers=auth(user_token))
    key = made.json()["key"]
    async with sdk(running, key) as client:
        assert [m.id async for m in client.models.list()] == [agent["id"]]
        reply = await client.chat.completions.create(model=agent["id"], messages=[{"role": "user", "content": "你好"}])
        assert reply.choices[0].message.content == DEFAULT_REPLY
        deleted = await running.client.delete(f"/api/keys/{made.json()['id']}", headers=auth(user_token))
        assert deleted.status_code == 204
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model=agent["id"], messages=[{"role": "user", "content": "还在吗"}])
    assert len(upstream.chat_requests) == 1
