"""POST /api/ui/chat (the AI SDK's UI message stream), resume and stop of a live turn, on one instance.

Both databases; the many-instances tests do the same across real processes with Redis.
"""

import asyncio
import json
from typing import Any

import httpx

from tests.conftest import Running, auth, chat_body, create_agent, signup
from tests.upstream import Reply, TestUpstream

# ai@7's part schemas: exactly these keys (memchat sends no others)
PART_KEYS = {
    "start": {"type", "messageId", "messageMetadata"},
    "text-start": {"type", "id"},
    "text-delta": {"type", "id", "delta"},
    "text-end": {"type", "id"},
    "reasoning-start": {"type", "id"},
    "reasoning-delta": {"type", "id", "delta"},
    "reasoning-end": {"type", "id"},
    "data-memory": {"type", "id", "data", "transient"},
    "data-conversation": {"type", "data", "transient"},
    "data-error": {"type", "data", "transient"},
    "error": {"type", "errorText"},
    "finish": {"type", "finishReason", "messageMetadata"},
}


def parse_sse(body: str) -> list[Any]:
    """The `data:` payloads of an SSE body, in order; [DONE] as the string."""
    parts: list[Any] = []
    for event in body.split("\n\n"):
        if not event.strip():
            continue
        assert event.startswith("data: "), event
        payload = event[len("data: ") :]
        parts.append(payload if payload == "[DONE]" else json.loads(payload))
    for part in parts:
        if part != "[DONE]":
            assert set(part) == PART_KEYS[part["type"]], part
    return parts


def text_of(parts: list[Any]) -> str:
    return "".join(p["delta"] for p in parts if p != "[DONE]" and p["type"] == "text-delta")


def of_type(parts: list[Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in parts if p != "[DONE]" and p["type"] == kind]


async def history(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    assert response.status_code == 200, response.text
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


def content(message: dict[str, Any]) -> str:
    return "".join(part["text"] for part in message["parts"])


async def read_until_text(lines: Any, into: list[str]) -> None:
    """Read SSE events from a streaming response until one with text arrives."""
    async for chunk in lines:
        into.append(chunk)
        if '"text-delta"' in chunk:
            return


async def test_a_turn_streams_as_ui_message_parts_with_the_ids_history_shows(
    running: Running, upstream: TestUpstream
) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    upstream.script(Reply(text="你好小明，很高兴认识你。"))
    response = await running.client.post(
        "/api/ui/chat", json=chat_body(agent["id"], "我叫小明", message_id="u-1"), headers=auth(token)
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["x-accel-buffering"] == "no"
    parts = parse_sse(response.text)
    kinds = [p if p == "[DONE]" else p["type"] for p in parts]
    deltas = kinds.count("text-delta")
    assert deltas >= 1
    assert kinds == ["start", "text-start"] + ["text-delta"] * deltas + [
        "text-end",
        "data-memory",
        "data-conversation",
        "finish",
        "[DONE]",
    ]
    assert text_of(parts) == "你好小明，很高兴认识你。"
    # the schema /openapi.json declares is one event (what schemathesis and OpenAPI 3.2 read), and
    # every event of the stream fits it: a `data` string
    spec = (await running.client.get("/openapi.json")).json()
    event = spec["paths"]["/api/ui/chat"]["post"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert event["type"] == "object"
    assert event["required"] == ["data"]
    assert event["properties"]["data"]["type"] == "string"
    events = [chunk for chunk in response.text.split("\n\n") if chunk.strip()]
    assert len(events) == len(parts)
    assert all(chunk.startswith("data: ") and "\n" not in chunk for chunk in events)  # one data line each
    await running.settle()
    stored = await history(running, token, agent["id"])
    user, reply = stored[-2], stored[-1]
    conversation_id = (await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(token))).json()[
        "id"
    ]
    start = parts[0]
    assert start["messageId"] == reply["id"]
    assert start["messageMetadata"] == {"userMessageId": user["id"], "conversationId": conversation_id}
    assert content(reply) == "你好小明，很高兴认识你。"
    assert reply["status"] == "completed"
    memory = of_type(parts, "data-memory")
    assert len(memory) == 1
    assert memory[0]["transient"] is True
    assert memory[0]["data"]["action"] == "added"
    assert "小明" in memory[0]["data"]["memory"]["content"]
    listed = await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(token))
    assert memory[0]["id"] in {m["id"] for m in listed.json()["memories"]}
    conversation = of_type(parts, "data-conversation")[0]["data"]
    assert conversation["messageCount"] == 2
    assert conversation["conversationId"] == conversation_id
    assert "小明" in conversation["summary"]
    finish = of_type(parts, "finish")[0]
    assert finish["finishReason"] == "stop"
    assert finish["messageMetadata"] == {"status": "completed"}
    # a retry of the same message gets the stored reply, with the same ids, and nothing new is stored
    again = await running.client.post(
        "/api/ui/chat", json=chat_body(agent["id"], "我叫小明", message_id="u-1"), headers=auth(token)
    )
    replayed = parse_sse(again.text)
    assert replayed[0]["messageId"] == reply["id"]
    assert text_of(replayed) == content(reply)
    assert len(await history(running, token, agent["id"])) == 2
    # the plain text route is unchanged
    plain = await running.client.post("/api/chat", json=chat_body(agent["id"], "再见"), headers=auth(token))
    assert plain.headers["content-type"].startswith("text/plain")
    assert not plain.text.startswith("data:")


async def test_an_upstream_failure_is_an_error_part_and_the_user_message_stays(
    running: Running, upstream: TestUpstream
) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    upstream.script(Reply(status=500))
    before = await running.client.post("/api/ui/chat", json=chat_body(agent["id"], "第一句"), headers=auth(token))
    assert before.status_code == 200
    parts = parse_sse(before.text)
    assert [p if p == "[DONE]" else p["type"] for p in parts] == ["data-error", "error", "[DONE]"]
    assert parts[0]["data"] == {"code": "upstream_error", "message": parts[1]["errorText"]}
    assert parts[0]["transient"] is True
    upstream.script(Reply(deltas=["说到", "一半"], cut_after=2))
    after = await running.client.post("/api/ui/chat", json=chat_body(agent["id"], "第二句"), headers=auth(token))
    parts = parse_sse(after.text)
    assert text_of(parts) == "说到一半"
    kinds = [p if p == "[DONE]" else p["type"] for p in parts]
    assert kinds[-5:] == ["data-error", "error", "data-conversation", "finish", "[DONE]"]
    assert of_type(parts, "data-error")[0]["data"]["code"] == "upstream_interrupted"
    assert of_type(parts, "finish")[0]["messageMetadata"] == {"status": "incomplete"}
    await running.settle()
    stored = await history(running, token, agent["id"])
    assert [(m["role"], content(m), m["status"]) for m in stored] == [
        ("user", "第一句", "completed"),
        ("user", "第二句", "completed"),
        ("assistant", "说到一半", "incomplete"),
    ]


async def test_resume_answers_the_live_reply_from_its_first_part_then_204(
    running: Running, upstream: TestUpstream
) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    assert (await running.client.get(f"/api/ui/chat/{agent['id']}/stream", headers=auth(token))).status_code == 204
    upstream.script(Reply(deltas=["一", "二", "三", "四"], hold_after=2))
    body = chat_body(agent["id"], "讲个故事")
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
        assert resumed.status_code == 200
        assert plain.status_code == 200
        assert resumed.headers["x-vercel-ai-ui-message-stream"] == "v1"
        upstream.release()
        async for chunk in chunks:
            posted.append(chunk)
        resumed_body = (await resumed.aread()).decode()
        plain_body = (await plain.aread()).decode()
    original = parse_sse("".join(posted))
    again = parse_sse(resumed_body)
    assert text_of(original) == "一二三四"
    assert text_of(again) == "一二三四"  # from the first text, nothing twice
    assert plain_body == "一二三四"
    assert again[0] == original[0]  # the same message id and metadata
    assert again[-2] == original[-2]
    assert again[-1] == "[DONE]"
    await running.settle()
    for path in (f"/api/ui/chat/{agent['id']}/stream", f"/api/chat/{agent['id']}/stream"):
        assert (await running.client.get(path, headers=auth(token))).status_code == 204


async def test_resume_by_conversation_id_and_of_nobody_elses_chat(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    other = await signup(running.client)
    agent = await create_agent(running.client, token)
    created = await running.client.post(
        f"/api/agents/{agent['id']}/conversations", json={"title": "第二个"}, headers=auth(token)
    )
    assert created.status_code == 201, created.text
    conversation_id = created.json()["id"]
    upstream.script(Reply(deltas=["甲", "乙"], hold_after=1))
    body = chat_body(agent["id"], "你好", conversationId=conversation_id)
    posted: list[str] = []
    async with running.client.stream("POST", "/api/ui/chat", json=body, headers=auth(token)) as response:
        chunks = response.aiter_text()
        await read_until_text(chunks, posted)
        # the default conversation streams nothing; another user sees no such chat
        assert (await running.client.get(f"/api/ui/chat/{agent['id']}/stream", headers=auth(token))).status_code == 204
        for chat_id in (conversation_id, agent["id"]):
            refused = await running.client.get(f"/api/ui/chat/{chat_id}/stream", headers=auth(other))
            assert refused.status_code == 404
            assert refused.json()["error"]["code"] == "chat_not_found"
            stop = await running.client.post(f"/api/chat/{chat_id}/stop", headers=auth(other))
            assert stop.status_code == 404
        resumed = await running.client.send(
            running.client.build_request("GET", f"/api/ui/chat/{conversation_id}/stream", headers=auth(token)),
            stream=True,
        )
        upstream.release()
        async for chunk in chunks:
            posted.append(chunk)
        assert text_of(parse_sse((await resumed.aread()).decode())) == "甲乙"
    assert (await running.client.get("/api/ui/chat/nope/stream", headers=auth(token))).status_code == 404
    assert (await running.client.get(f"/api/ui/chat/{agent['id']}/stream")).status_code == 401


async def test_stop_cancels_the_upstream_and_stores_what_was_streamed(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    pieces = [f"第{i}句。" for i in range(300)]
    upstream.script(Reply(deltas=pieces, delay_ms=20))
    posted: list[str] = []
    async with running.client.stream(
        "POST", "/api/ui/chat", json=chat_body(agent["id"], "一直说下去"), headers=auth(token)
    ) as response:
        chunks = response.aiter_text()
        await read_until_text(chunks, posted)
        resumed = await running.client.send(
            running.client.build_request("GET", f"/api/ui/chat/{agent['id']}/stream", headers=auth(token)),
            stream=True,
        )
        stopped = await running.client.post(f"/api/chat/{agent['id']}/stop", headers=auth(token))
        assert stopped.status_code == 204
        async for chunk in chunks:
            posted.append(chunk)
        resumed_parts = parse_sse((await resumed.aread()).decode())
    parts = parse_sse("".join(posted))
    shown = text_of(parts)
    assert 0 < len(shown) < len("".join(pieces))
    finish = of_type(parts, "finish")[0]
    assert finish["messageMetadata"] == {"status": "stopped"}
    assert parts[-1] == "[DONE]"
    assert text_of(resumed_parts) == shown
    assert resumed_parts[-1] == "[DONE]"
    # the upstream request was cancelled, not read to its end
    assert await asyncio.to_thread(upstream.wait_stream_abandoned, 10.0)
    assert upstream.deltas_sent < len(pieces)
    stored = await history(running, token, agent["id"])  # stop answered once the reply was stored
    assert stored[-1]["role"] == "assistant"
    assert stored[-1]["status"] == "stopped"
    assert content(stored[-1]) == shown
    assert stored[-1]["id"] == parts[0]["messageId"]
    # nothing streams any more: stop and resume are no-ops
    assert (await running.client.post(f"/api/chat/{agent['id']}/stop", headers=auth(token))).status_code == 204
    assert (await running.client.get(f"/api/ui/chat/{agent['id']}/stream", headers=auth(token))).status_code == 204


async def test_a_client_disconnect_is_not_a_stop(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    upstream.script(Reply(deltas=["前半", "后半"], hold_after=1))
    async with httpx.AsyncClient(base_url=running.base_url, timeout=30, verify=False) as leaving:
        async with leaving.stream(
            "POST", "/api/ui/chat", json=chat_body(agent["id"], "说吧"), headers=auth(token)
        ) as response:
            await read_until_text(response.aiter_text(), [])
    # the client is gone; a reconnecting client resumes the reply, which is still read and stored whole
    resumed = await running.client.send(
        running.client.build_request("GET", f"/api/ui/chat/{agent['id']}/stream", headers=auth(token)), stream=True
    )
    assert resumed.status_code == 200
    upstream.release()
    assert text_of(parse_sse((await resumed.aread()).decode())) == "前半后半"
    await running.settle()
    stored = await history(running, token, agent["id"])
    assert (content(stored[-1]), stored[-1]["status"]) == ("前半后半", "completed")
