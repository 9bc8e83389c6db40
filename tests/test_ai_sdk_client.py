"""The AI SDK's own chat client (ai@7, both transports, resume) holds a conversation with memory.

web/scripts/ai-sdk-client.mjs drives ai's AbstractChat (what useChat wraps) from Node; these tests
run it against a real memchat and compare what the client ends with to what the server stored.
"""

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Running, auth, chat_body, create_agent, signup
from tests.upstream import Reply, TestUpstream

WEB = Path(__file__).resolve().parent.parent / "web"
SCRIPT = WEB / "scripts" / "ai-sdk-client.mjs"


@pytest.fixture(autouse=True)
def _node() -> None:
    assert shutil.which("node"), "Node is needed for the AI SDK client tests"
    assert (WEB / "node_modules" / "ai").is_dir(), "run `cd web && npm ci` (scripts/test does)"


class Client:
    def __init__(self, running: Running, token: str, agent_id: str, chat_id: str | None = None):
        self.env = {
            **os.environ,
            "MEMCHAT_URL": running.base_url,
            "MEMCHAT_TOKEN": token,
            "MEMCHAT_AGENT_ID": agent_id,
            "MEMCHAT_CHAT_ID": chat_id or agent_id,
        }

    async def start(self, *args: str, messages: list[dict[str, Any]] | None = None) -> asyncio.subprocess.Process:
        env = {**self.env, "MEMCHAT_MESSAGES": json.dumps(messages or [])}
        return await asyncio.create_subprocess_exec(
            "node", str(SCRIPT), *args, cwd=WEB, env=env, stdout=asyncio.subprocess.PIPE
        )

    async def run(self, *args: str, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        process = await self.start(*args, messages=messages)
        out, _ = await process.communicate()
        assert process.returncode == 0
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
        return result


async def stored(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], "".join(p["text"] for p in m["parts"])) for m in messages]


async def test_the_default_transport_holds_a_conversation_with_memory(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    client = Client(running, token, agent["id"])
    upstream.script(Reply(text="你好小明！"))
    first = await client.run("send", "ui", "我叫小明")
    assert first["status"] == "ready"
    assert first["errors"] == []
    assert first["finished"]["finishReason"] == "stop"
    await running.settle()
    history = await stored(running, token, agent["id"])
    user, reply = first["messages"]
    assert (user["text"], reply["text"]) == ("我叫小明", "你好小明！")
    assert reply["id"] == history[1]["id"]  # the id the stream announced is the stored reply's
    assert reply["metadata"]["userMessageId"] == history[0]["id"]
    assert reply["metadata"]["status"] == "completed"
    kinds = [part["type"] for part in first["data"]]
    assert kinds == ["data-memory", "data-conversation"]  # onData got both, transient
    assert "小明" in first["data"][0]["data"]["memory"]["content"]
    assert first["data"][1]["data"]["messageCount"] == 2
    # after a refresh the chat starts from the history endpoint; the memory reaches the next prompt
    upstream.script(Reply(text="你是小明。"))
    second = await client.run("send", "ui", "我是谁？", messages=history)
    assert [m["text"] for m in second["messages"]] == ["我叫小明", "你好小明！", "我是谁？", "你是小明。"]
    prompt = upstream.chat_requests[-1]["messages"]
    assert any("小明" in m["content"] for m in prompt if m["role"] == "system")  # the memory
    assert [m["content"] for m in prompt[-3:]] == ["我叫小明", "你好小明！", "我是谁？"]  # history, then the input
    await running.settle()
    assert texts(await stored(running, token, agent["id"])) == [
        ("user", "我叫小明"),
        ("assistant", "你好小明！"),
        ("user", "我是谁？"),
        ("assistant", "你是小明。"),
    ]


async def test_the_text_transport_is_unchanged(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    upstream.script(Reply(text="纯文本的回答。"))
    result = await Client(running, token, agent["id"]).run("send", "text", "你好")
    assert result["errors"] == []
    assert [(m["role"], m["text"]) for m in result["messages"]] == [("user", "你好"), ("assistant", "纯文本的回答。")]
    await running.settle()
    assert texts(await stored(running, token, agent["id"])) == [("user", "你好"), ("assistant", "纯文本的回答。")]


@pytest.mark.parametrize("kind", ["ui", "text"])
async def test_resume_reaches_a_reply_that_streams_now(running: Running, upstream: TestUpstream, kind: str) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    client = Client(running, token, agent["id"])
    # nothing streams: resume ends at once, the chat unchanged
    idle = await client.run("resume", kind)
    assert idle["messages"] == []
    assert idle["status"] == "ready"
    upstream.script(Reply(deltas=["接着", "说完"], hold_after=1))
    body = chat_body(agent["id"], "说个故事")
    async with running.client.stream("POST", "/api/ui/chat", json=body, headers=auth(token)) as response:
        chunks = response.aiter_text()
        async for chunk in chunks:
            if '"text-delta"' in chunk:
                break
        # a second tab (or the same one after a refresh) resumes while the reply streams
        process = await client.start("resume", kind)
        assert process.stdout is not None
        connected = json.loads(await process.stdout.readline())
        assert connected == {"connected": 200}
        upstream.release()
        out, _ = await process.communicate()
        async for _chunk in chunks:
            pass
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["errors"] == []
    assert [(m["role"], m["text"]) for m in result["messages"]] == [("assistant", "接着说完")]
    await running.settle()
    history = await stored(running, token, agent["id"])
    if kind == "ui":
        assert result["messages"][0]["id"] == history[-1]["id"]
    assert texts(history)[-1] == ("assistant", "接着说完")


async def test_a_reasoning_models_thinking_reaches_the_client_as_a_reasoning_part(
    running: Running, upstream: TestUpstream
) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    client = Client(running, token, agent["id"])
    upstream.script(Reply(text="你好小明！", reasoning=["先想一想，", "再打招呼。"]))
    first = await client.run("send", "ui", "我叫小明")
    assert first["errors"] == []
    reply = first["messages"][-1]
    assert reply["text"] == "你好小明！"
    assert reply["reasoning"] == ["done:先想一想，再打招呼。"]  # one reasoning part, ended
    assert reply["partTypes"].index("reasoning") < reply["partTypes"].index("text")
    await running.settle()

    # the text transport is the seed's wire format: the reply's text, no thinking
    upstream.script(Reply(text="还记得。", reasoning=["回忆一下。"]))
    second = await client.run("send", "text", "还记得我吗")
    assert second["errors"] == []
    assert second["messages"][-1]["text"] == "还记得。"
    assert second["messages"][-1]["reasoning"] == []
    history = await stored(running, token, agent["id"])
    assert history[-1]["parts"][0] == {"type": "reasoning", "text": "回忆一下。"}
