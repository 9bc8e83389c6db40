"""/mcp: a real MCP client session (the `mcp` SDK over streamable HTTP) against memchat on uvicorn."""

import asyncio
import contextlib
import io
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from memchat.mcp_tools import endpoint
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, create_agent, serve_app, signup
from tests.memories.support import Serve, serve_fixture  # noqa: F401
from tests.serve import Server, free_port, redis_url, server_env
from tests.upstream import DEFAULT_REPLY, TestUpstream

CLIENTS_MD = Path(__file__).resolve().parents[1] / "docs" / "clients.md"
TOOLS = {
    "list_agents",
    "search_memories",
    "list_memories",
    "add_memory",
    "update_memory",
    "archive_memory",
    "delete_memory",
    "list_conversations",
    "read_conversation",
}


@asynccontextmanager
async def mcp_session(running: Running, token: str) -> AsyncIterator[ClientSession]:
    """ClientSession with the classic handshake (initialize), the bearer credential on every request."""
    async with (
        httpx2.AsyncClient(headers=auth(token), timeout=30) as http,
        streamable_http_client(f"{running.base_url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


class Tools:
    """Calls tools on a ClientSession or a Client alike."""

    def __init__(self, peer: ClientSession | Client):
        self.peer = peer

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.peer.call_tool(name, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    async def fails(self, name: str, **arguments: Any) -> str:
        result = await self.peer.call_tool(name, arguments)
        assert result.is_error
        [block] = result.content
        assert isinstance(block, TextContent)
        return block.text


async def rest_memories(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/memories", headers=auth(token))
    assert response.status_code == 200
    memories: list[dict[str, Any]] = response.json()["memories"]
    return memories


async def test_the_server_names_itself_with_memchats_version(running: Running) -> None:
    token = await signup(running.client)
    async with (
        httpx2.AsyncClient(headers=auth(token), timeout=30) as http,
        streamable_http_client(f"{running.base_url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        result = await session.initialize()
    assert result.server_info.name == "memchat"
    assert result.server_info.version == version("memchat") != ""
    # The same version as the REST API's OpenAPI document.
    assert (await running.client.get("/openapi.json")).json()["info"]["version"] == result.server_info.version


async def test_the_tools_are_listed(running: Running) -> None:
    token = await signup(running.client)
    async with mcp_session(running, token) as session:
        listed = (await session.list_tools()).tools
    assert {t.name for t in listed} == TOOLS
    by_name = {t.name: t for t in listed}
    assert by_name["add_memory"].input_schema["required"] == ["agent_id", "type", "content"]
    assert by_name["search_memories"].annotations is not None
    assert by_name["search_memories"].annotations.read_only_hint is True
    assert by_name["delete_memory"].annotations is not None
    assert by_name["delete_memory"].annotations.destructive_hint is True


@asynccontextmanager
async def mcp_peer(running: Running, token: str, era: str) -> AsyncIterator[Tools]:
    """`handshake`: ClientSession with initialize (protocol 2025-11-25, stateless here);
    `sessionless`: the SDK's Client, which speaks the 2026-07-28 protocol (no session at all)."""
    if era == "handshake":
        async with mcp_session(running, token) as session:
            yield Tools(session)
        return
    async with (
        httpx2.AsyncClient(headers=auth(token), timeout=30) as http,
        Client(streamable_http_client(f"{running.base_url}/mcp", http_client=http)) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        yield Tools(client)


@pytest.mark.parametrize("era", ["handshake", "sessionless"])
async def test_memories_are_added_searched_updated_archived_and_deleted(running: Running, era: str) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    async with mcp_peer(running, token, era) as tools:
        agents = await tools.call("list_agents")
        assert [a["id"] for a in agents["agents"]] == [agent["id"]]

        added = await tools.call("add_memory", agent_id=agent["id"], type="preference", content="喜欢猫", importance=4)
        assert (added["content"], added["importance"], added["status"]) == ("喜欢猫", 4, "active")
        assert [m["id"] for m in await rest_memories(running, token, agent["id"])] == [added["id"]]

        found = await tools.call("search_memories", agent_id=agent["id"], query="你喜欢什么动物")
        assert [m["id"] for m in found["memories"]] == [added["id"]]

        updated = await tools.call("update_memory", memory_id=added["id"], content="喜欢橘猫")
        assert (updated["content"], updated["importance"]) == ("喜欢橘猫", 4)
        archived = await tools.call("archive_memory", memory_id=added["id"])
        assert archived["status"] == "archived"
        assert (await tools.call("search_memories", agent_id=agent["id"], query="猫"))["memories"] == []
        assert (await tools.call("list_memories", agent_id=agent["id"]))["memories"] == []
        everything = await tools.call("list_memories", agent_id=agent["id"], status=None)
        assert [(m["content"], m["status"]) for m in everything["memories"]] == [("喜欢橘猫", "archived")]

        history = await running.client.get(f"/api/memories/{added['id']}/history", headers=auth(token))
        events = history.json()["events"]
        assert [(e["kind"], e["actor"]) for e in events] == [
            ("created", "user"),
            ("edited", "user"),
            ("archived", "user"),
        ]
        assert events[1]["before"]["content"] == "喜欢猫"

        assert await tools.call("delete_memory", memory_id=added["id"]) == {"deleted": added["id"]}
        assert await rest_memories(running, token, agent["id"]) == []
        gone = await tools.fails("delete_memory", memory_id=added["id"])
        assert gone.endswith("memory_not_found: memory not found")


async def test_search_ranks_as_the_prompt_does(running: Running, upstream: TestUpstream) -> None:
    """What search returns for a text is what a chat turn with that text puts in its prompt, in order."""
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    async with mcp_session(running, token) as session:
        tools = Tools(session)
        for n in range(12):
            await tools.call(
                "add_memory", agent_id=agent["id"], type="preference", content=f"记忆{n:02d}", importance=1 + n % 5
            )
        found = [
            m["content"] for m in (await tools.call("search_memories", agent_id=agent["id"], query="你好"))["memories"]
        ]
    assert len(found) == 10  # the prompt's limit (MEMCHAT_MEMORY_INJECTION_LIMIT)
    assert [int(c[2:]) % 5 for c in found] == sorted((int(c[2:]) % 5 for c in found), reverse=True)

    assert (await chat(running, token, agent["id"], "你好")).status_code == 200
    [request] = upstream.chat_requests
    system = request["messages"][0]["content"]
    in_prompt = sorted((system.index(f"] {c}"), c) for n in range(12) if f"] {(c := f'记忆{n:02d}')}" in system)
    assert [c for _, c in in_prompt] == found


async def test_a_conversation_is_read_after_a_chat_turn(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    other = await create_agent(running.client, token, name="阿青", handle="@qing")
    async with mcp_session(running, token) as session:
        tools = Tools(session)
        empty = await tools.call("read_conversation", agent_id=agent["id"])
        assert empty == {"conversation": None, "messages": [], "hasMore": False}

        assert (await chat(running, token, agent["id"], "我叫小王，喜欢猫")).status_code == 200
        rest = (await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(token))).json()
        read = await tools.call("read_conversation", agent_id=agent["id"])
        assert read["conversation"]["summary"] == rest["summary"]
        assert read["conversation"]["summary"]
        assert read["conversation"]["messageCount"] == 2
        assert [(m["role"], m["parts"][0]["text"]) for m in read["messages"]] == [
            ("user", "我叫小王，喜欢猫"),
            ("assistant", DEFAULT_REPLY),
        ]
        last = await tools.call("read_conversation", agent_id=agent["id"], conversation_id=rest["id"], limit=1)
        assert [m["role"] for m in last["messages"]] == ["assistant"]
        assert last["hasMore"] is True

        listed = await tools.call("list_conversations", agent_id=agent["id"])
        assert [c["id"] for c in listed["conversations"]] == [rest["id"]]
        wrong_agent = await tools.fails("read_conversation", agent_id=other["id"], conversation_id=rest["id"])
        assert wrong_agent.endswith("conversation_not_found: conversation not found")


async def test_another_users_agent_and_memories_are_not_found(running: Running) -> None:
    alice, bob = await signup(running.client), await signup(running.client)
    agent = await create_agent(running.client, alice)
    async with mcp_session(running, alice) as session:
        memory = await Tools(session).call("add_memory", agent_id=agent["id"], type="boundary", content="不要叫我宝贝")
    assert (await chat(running, alice, agent["id"], "你好")).status_code == 200

    async with mcp_session(running, bob) as session:
        tools = Tools(session)
        assert await tools.call("list_agents") == {"agents": []}
        for name, arguments in [
            ("list_memories", {"agent_id": agent["id"]}),
            ("search_memories", {"agent_id": agent["id"], "query": "宝贝"}),
            ("add_memory", {"agent_id": agent["id"], "type": "preference", "content": "x"}),
            ("read_conversation", {"agent_id": agent["id"]}),
            ("list_conversations", {"agent_id": agent["id"]}),
        ]:
            assert (await tools.fails(name, **arguments)).endswith("agent_not_found: agent not found"), name
        for name, arguments in [
            ("update_memory", {"memory_id": memory["id"], "content": "改了"}),
            ("archive_memory", {"memory_id": memory["id"]}),
            ("delete_memory", {"memory_id": memory["id"]}),
        ]:
            assert (await tools.fails(name, **arguments)).endswith("memory_not_found: memory not found"), name

    [kept] = await rest_memories(running, alice, agent["id"])
    assert (kept["id"], kept["content"], kept["status"]) == (memory["id"], "不要叫我宝贝", "active")
    bobs = (await running.client.get("/api/agents", headers=auth(bob))).json()
    assert bobs["agents"] == []


async def test_bad_arguments_are_tool_errors_and_change_nothing(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    async with mcp_session(running, token) as session:
        tools = Tools(session)
        for arguments in [
            {"type": "preference", "content": "x", "importance": 9},
            {"type": "preference", "content": ""},
            {"type": "hobby", "content": "x"},
            {"type": "preference", "content": "x" * 2001},
            {"type": "preference"},
        ]:
            message = await tools.fails("add_memory", agent_id=agent["id"], **arguments)
            assert message.startswith("Error executing tool add_memory"), message
        await tools.call("add_memory", agent_id=agent["id"], type="preference", content="喜欢猫")
        duplicate = await tools.fails("add_memory", agent_id=agent["id"], type="preference", content="喜欢猫")
        assert duplicate.endswith("duplicate_memory: an active memory with this content already exists")
    assert [m["content"] for m in await rest_memories(running, token, agent["id"])] == ["喜欢猫"]


async def test_an_api_key_works_and_is_refused_once_revoked(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    key = (await running.client.post("/api/keys", json={"name": "mcp"}, headers=auth(token))).json()
    async with mcp_session(running, key["key"]) as session:
        agents = await Tools(session).call("list_agents")
        assert [a["id"] for a in agents["agents"]] == [agent["id"]]
    assert (await running.client.delete(f"/api/keys/{key['id']}", headers=auth(token))).status_code == 204
    refused = await _tools_list(running, key["key"])
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_api_key"


async def _tools_list(running: Running, token: str | None) -> httpx.Response:
    """A raw JSON-RPC tools/list POST, as an MCP client sends it."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    if token is not None:
        headers |= auth(token)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return await running.client.post("/mcp", json=body, headers=headers)


async def test_no_token_or_a_bad_one_is_refused(running: Running) -> None:
    missing = await _tools_list(running, None)
    assert missing.status_code == 401
    assert missing.json() == {"error": {"code": "missing_token", "message": "missing bearer token"}}
    forged = await _tools_list(running, "eyJhbGciOiJIUzI1NiJ9.e30.bad")
    assert forged.status_code == 401
    assert forged.json()["error"]["code"] == "invalid_token"
    token = await signup(running.client)
    assert (await running.client.delete("/api/me", headers=auth(token))).status_code == 204
    deleted = await _tools_list(running, token)  # a valid signature, but no such user any more
    assert deleted.status_code == 401
    listen = await running.client.get(
        "/mcp", headers={"Accept": "text/event-stream"} | auth(await signup(running.client))
    )
    assert listen.status_code == 405  # no server-to-client stream to hold open
    assert listen.json()["error"]["code"] == "method_not_allowed"
    with pytest.raises(ExceptionGroup) as refused:
        async with mcp_session(running, "not-a-token"):
            pass
    assert refused.group_contains(MCPError, match="error response")


async def test_first_requests_at_once_all_wait_for_the_one_server(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK is imported and the server built on the first /mcp request, not at start: requests
    that come at once all wait for that one build, and every one is answered."""
    builds: list[int] = []
    build = endpoint._build

    def counted() -> Any:
        builds.append(1)
        return build()

    monkeypatch.setattr(endpoint, "_build", counted)
    token = await signup(running.client)
    answers = await asyncio.gather(*(_tools_list(running, token) for _ in range(5)))
    assert [a.status_code for a in answers] == [200] * 5
    assert all({t["name"] for t in a.json()["result"]["tools"]} == TOOLS for a in answers)
    assert (await _tools_list(running, token)).status_code == 200
    assert builds == [1]


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer without sticky sessions: each request goes to the next instance's port."""

    def __init__(self, ports: list[int]):
        self._ports = ports
        self._inner = httpx2.AsyncHTTPTransport()
        self.served: list[int] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self._ports[len(self.served) % len(self._ports)]
        self.served.append(port)
        request.url = request.url.copy_with(port=port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_one_mcp_session_is_answered_by_any_instance(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    """Two real `memchat serve` processes on one PostgreSQL database; the session's requests alternate."""
    # several instances share Redis (memchat refuses a second one on the database without it)
    env = server_env(postgres_url, upstream, tmp_path, MEMCHAT_REDIS_URL=redis_url())
    servers = [Server(env, free_port(), tmp_path / f"server-{n}.log") for n in range(2)]
    try:
        for server in servers:
            await server.start()
        a, b = servers
        async with httpx.AsyncClient(base_url=a.url, timeout=30, verify=False) as rest:
            token = await signup(rest)
            agent = await create_agent(rest, token)
            balancer = RoundRobin([a.port, b.port])
            async with (
                httpx2.AsyncClient(headers=auth(token), timeout=30, transport=balancer) as http,
                streamable_http_client(f"{a.url}/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = Tools(session)
                added = [
                    await tools.call("add_memory", agent_id=agent["id"], type="preference", content=text)
                    for text in ("喜欢猫", "喜欢雨天", "不喜欢香菜")
                ]
                listed = await tools.call("list_memories", agent_id=agent["id"])
                archived = await tools.call("archive_memory", memory_id=added[0]["id"])
            assert {m["id"] for m in listed["memories"]} == {m["id"] for m in added}
            assert archived["status"] == "archived"
            assert set(balancer.served) == {a.port, b.port}
            assert len(balancer.served) >= 6  # initialize, initialized, five calls: all answered
            memories = (await rest.get(f"/api/agents/{agent['id']}/memories", headers=auth(token))).json()["memories"]
            assert sorted((m["content"], m["status"]) for m in memories) == [
                ("不喜欢香菜", "active"),
                ("喜欢猫", "archived"),
                ("喜欢雨天", "active"),
            ]
    finally:
        for server in servers:
            server.stop()


async def test_search_with_ranked_recall_is_the_prompts_choice_by_similarity(
    serve: Serve, upstream: TestUpstream
) -> None:
    """MEMCHAT_MEMORY_RECALL=ranked with the local embedder: boundaries first, then importance, recency
    and similarity to the query, exactly the memories (and order) a turn with that text injects."""
    # a generous embedding timeout: on a loaded machine the 1 s default can drop similarity (by design)
    running = await serve(memory_recall="ranked", memory_injection_limit=3, memory_recall_timeout_s=60)
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    async with mcp_session(running, token) as session:
        tools = Tools(session)
        for type_, content, importance in [
            ("boundary", "我不想聊工作", 2),
            ("preference", "我养了一只橘猫，叫橙子", 3),
            ("preference", "我喜欢看恐怖电影", 5),
            ("conversation_style", "说话简短一点", 4),
            ("preference", "我喜欢吃火锅", 3),
        ]:
            await tools.call("add_memory", agent_id=agent["id"], type=type_, content=content, importance=importance)
        assert (await chat(running, token, agent["id"], "你好")).status_code == 200  # the memories get vectors
        question = "橙子最近不爱吃饭怎么办"
        searched = await tools.call("search_memories", agent_id=agent["id"], query=question)
    found = [m["content"] for m in searched["memories"]]
    assert found == ["我不想聊工作", "我养了一只橘猫，叫橙子", "我喜欢看恐怖电影"]
    assert (await chat(running, token, agent["id"], question)).status_code == 200
    system = upstream.chat_requests[-1]["messages"][0]["content"]
    injected = [line.split("] ", 1)[1] for line in system.split("\n") if line.startswith("- [")]
    assert injected == found


def _documented_example() -> str:
    section = CLIENTS_MD.read_text().split("\n## MCP\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


async def test_the_documented_example_runs_as_written(running: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    key = (await running.client.post("/api/keys", json={"name": "docs"}, headers=auth(token))).json()["key"]
    monkeypatch.setenv("MEMCHAT_KEY", key)
    code = _documented_example().replace("http://localhost:8000", running.base_url)
    out = io.StringIO()

    def run() -> None:  # its own event loop (asyncio.run), off the one that serves memchat
        exec(compile(code, str(CLIENTS_MD), "exec"), {"__name__": "docs_example"})

    with contextlib.redirect_stdout(out):
        await asyncio.to_thread(run)
    assert out.getvalue() == "['我喜欢猫']\n"
    assert [m["content"] for m in await rest_memories(running, token, agent["id"])] == ["我喜欢猫"]


async def test_a_browser_mcp_client_passes_the_cors_preflight(settings: Settings) -> None:
    async with serve_app(settings, cors_origins=["https://app.example.com"]) as running:
        preflight = await running.client.options(
            "/mcp",
            headers={
                "Origin": "https://app.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version, mcp-method",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://app.example.com"
        allowed = preflight.headers["access-control-allow-headers"].lower()
        assert {"mcp-protocol-version", "mcp-method", "mcp-name", "authorization"} <= set(allowed.split(", "))
        token = await signup(running.client)
        async with mcp_session(running, token) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
