"""A reasoning model's thinking (`delta.reasoning_content`, or `delta.reasoning`): streamed as the AI
SDK's reasoning parts, stored with the reply and shown in history, replayed on retry and resume,
kept on stop, passed through /v1; never in the plain text stream, a prompt or a summary. Both
databases."""

from typing import Any

import openai
import pytest

from tests.chat.test_ui_stream import history, of_type, parse_sse, read_until_text, text_of
from tests.conftest import Running, auth, chat_body, create_agent, serve_app, signup
from tests.upstream import Reply, TestUpstream

THINKING = ["用户说自己叫小明，", "应该友好地打招呼，", "并记住这个名字。"]
REPLY = "你好小明，很高兴认识你。"


def reasoning_of(parts: list[Any]) -> str:
    return "".join(p["delta"] for p in parts if p != "[DONE]" and p["type"] == "reasoning-delta")


def kinds(parts: list[Any]) -> list[str]:
    """The part types in order, a run of deltas as one."""
    out: list[str] = []
    for part in parts:
        kind = part if part == "[DONE]" else part["type"]
        if not (out and out[-1] == kind and kind.endswith("-delta")):
            out.append(kind)
    return out


async def _agent(running: Running) -> tuple[str, dict[str, Any]]:
    token = await signup(running.client)
    return token, await create_agent(running.client, token)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_thinking_streams_as_reasoning_parts_before_the_text_and_history_shows_it(
    running: Running, upstream: TestUpstream, field: str
) -> None:
    token, agent = await _agent(running)
    upstream.script(Reply(text=REPLY, reasoning=THINKING, reasoning_field=field))
    response = await running.client.post(
        "/api/ui/chat", json=chat_body(agent["id"], "我叫小明", message_id="u-1"), headers=auth(token)
    )
    assert response.status_code == 200
    parts = parse_sse(response.text)  # every part has exactly ai@7's keys
    assert kinds(parts)[:7] == [
        "start",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
    ]
    assert reasoning_of(parts) == "".join(THINKING)
    assert text_of(parts) == REPLY
    ids = {p["id"] for p in of_type(parts, "reasoning-start") + of_type(parts, "reasoning-end")}
    assert len(ids) == 1
    assert ids != {"text-0"}
    await running.settle()

    messages = await history(running, token, agent["id"])
    reply = messages[-1]
    assert reply["role"] == "assistant"
    assert reply["parts"] == [{"type": "reasoning", "text": "".join(THINKING)}, {"type": "text", "text": REPLY}]
    assert messages[0]["parts"] == [{"type": "text", "text": "我叫小明"}]

    # the next turn's prompt and the summary hold the reply, never its thinking
    upstream.script(Reply(text="好的。"))
    again = await running.client.post("/api/chat", json=chat_body(agent["id"], "再说一句"), headers=auth(token))
    assert again.text == "好的。"
    prompt = upstream.chat_requests[-1]["messages"]
    assert REPLY in str(prompt)
    assert "应该友好地打招呼" not in str(prompt)
    assert all(set(m) == {"role", "content"} for m in prompt)
    await running.settle()
    conversation = await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(token))
    assert "应该友好地打招呼" not in conversation.text


async def test_the_plain_text_stream_stays_the_reply_alone(running: Running, upstream: TestUpstream) -> None:
    token, agent = await _agent(running)
    upstream.script(Reply(text=REPLY, reasoning=THINKING))
    response = await running.client.post("/api/chat", json=chat_body(agent["id"], "我叫小明"), headers=auth(token))
    assert response.content == REPLY.encode("utf-8")  # byte for byte the seed's wire format
    await running.settle()
    messages = await history(running, token, agent["id"])
    assert messages[-1]["parts"][0] == {"type": "reasoning", "text": "".join(THINKING)}


async def test_a_retry_replays_the_thinking_and_a_resume_follows_it(running: Running, upstream: TestUpstream) -> None:
    token, agent = await _agent(running)
    upstream.script(Reply(text=REPLY, reasoning=THINKING, hold_after=len(THINKING) + 1))
    body = chat_body(agent["id"], "我叫小明", message_id="u-1")
    posted: list[str] = []
    async with running.client.stream("POST", "/api/ui/chat", json=body, headers=auth(token)) as response:
        chunks = response.aiter_text()
        await read_until_text(chunks, posted)
        resumed = await running.client.send(
            running.client.build_request("GET", f"/api/ui/chat/{agent['id']}/stream", headers=auth(token)),
            stream=True,
        )
        plain = await running.client.send(
            running.client.build_request("GET", f"/api/chat/{agent['id']}/stream", headers=auth(token)),
            stream=True,
        )
        upstream.release()
        async for chunk in chunks:
            posted.append(chunk)
        resumed_parts = parse_sse((await resumed.aread()).decode())
        plain_body = (await plain.aread()).decode()
    assert reasoning_of(parse_sse("".join(posted))) == "".join(THINKING)
    assert reasoning_of(resumed_parts) == "".join(THINKING)  # from the first thinking on, nothing twice
    assert text_of(resumed_parts) == REPLY
    assert plain_body == REPLY
    await running.settle()

    retried = await running.client.post("/api/ui/chat", json=body, headers=auth(token))
    parts = parse_sse(retried.text)
    assert kinds(parts)[:4] == ["start", "reasoning-start", "reasoning-delta", "reasoning-end"]
    assert reasoning_of(parts) == "".join(THINKING)
    assert text_of(parts) == REPLY
    assert len(upstream.chat_requests) == 1  # the stored reply, not a second call


async def test_a_stop_keeps_the_thinking_streamed_so_far(running: Running, upstream: TestUpstream) -> None:
    token, agent = await _agent(running)
    upstream.script(Reply(deltas=["先说", "一半", "再说"], reasoning=THINKING, hold_after=len(THINKING) + 1))
    body = chat_body(agent["id"], "讲个故事")
    posted: list[str] = []
    async with running.client.stream("POST", "/api/ui/chat", json=body, headers=auth(token)) as response:
        chunks = response.aiter_text()
        await read_until_text(chunks, posted)
        stopped = await running.client.post(f"/api/chat/{agent['id']}/stop", headers=auth(token))
        assert stopped.status_code == 204
        async for chunk in chunks:
            posted.append(chunk)
    upstream.release()
    parts = parse_sse("".join(posted))
    assert of_type(parts, "finish")[0]["messageMetadata"] == {"status": "stopped"}
    await running.settle()
    reply = (await history(running, token, agent["id"]))[-1]
    assert reply["status"] == "stopped"
    assert reply["parts"] == [{"type": "reasoning", "text": "".join(THINKING)}, {"type": "text", "text": "先说"}]


async def test_thinking_has_its_own_cap_and_does_not_count_as_reply_text(settings: Any, upstream: TestUpstream) -> None:
    async with serve_app(settings, max_reply_chars=12, max_reasoning_chars=10) as running:
        token, agent = await _agent(running)
        upstream.script(Reply(text=REPLY, reasoning=THINKING))
        response = await running.client.post(
            "/api/ui/chat", json=chat_body(agent["id"], "我叫小明"), headers=auth(token)
        )
        parts = parse_sse(response.text)
        assert reasoning_of(parts) == "".join(THINKING)[:10]
        assert text_of(parts) == REPLY  # 12 characters: the thinking took none of them
        assert of_type(parts, "finish")[0]["messageMetadata"] == {"status": "completed"}
        await running.settle()
        reply = (await history(running, token, agent["id"]))[-1]
        assert reply["parts"][0] == {"type": "reasoning", "text": "".join(THINKING)[:10]}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_v1_passes_the_thinking_through_streamed_and_not(
    running: Running, upstream: TestUpstream, field: str
) -> None:
    token, agent = await _agent(running)
    async with openai.AsyncOpenAI(base_url=f"{running.base_url}/v1", api_key=token, max_retries=0) as client:
        upstream.script(Reply(text=REPLY, reasoning=THINKING, reasoning_field=field))
        whole = await client.chat.completions.create(
            model=agent["id"], messages=[{"role": "user", "content": "我叫小明"}]
        )
        message = whole.choices[0].message
        assert message.content == REPLY
        assert (message.model_extra or {}).get("reasoning_content") == "".join(THINKING)

        upstream.script(Reply(text=REPLY, reasoning=THINKING, reasoning_field=field))
        stream = await client.chat.completions.create(
            model=agent["id"], messages=[{"role": "user", "content": "再来一次"}], stream=True
        )
        thinking: list[str] = []
        text: list[str] = []
        async for chunk in stream:
            for choice in chunk.choices:
                extra = choice.delta.model_extra or {}
                if extra.get("reasoning_content"):
                    assert not text, "thinking after the text"
                    thinking.append(extra["reasoning_content"])
                if choice.delta.content:
                    text.append(choice.delta.content)
        assert "".join(thinking) == "".join(THINKING)
        assert "".join(text) == REPLY

        upstream.script(Reply(text=REPLY))  # a model without thinking: no reasoning_content key at all
        plain = await client.chat.completions.create(model=agent["id"], messages=[{"role": "user", "content": "嗯"}])
        assert "reasoning_content" not in (plain.choices[0].message.model_extra or {})
