"""Ranked recall, the LLM summary, and "with nothing configured, behaviour is exactly v1"."""

import random
from typing import Any

from sqlalchemy import select

from memchat.chat.summary import build_conversation_summary
from memchat.models import Memory, Message
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, chat_body, create_agent, signup
from tests.memories.support import Serve, completions, memories, serve_fixture, system_prompt  # noqa: F401
from tests.observability.scrape import moved, scrape
from tests.upstream import Reply, TestUpstream

MEMORY_HEADER = "以下是用户与该 Agent 的长期记忆，请优先尊重："
REPLY = "嗯嗯，我在听。"


def _memory_lines(request: dict[str, Any]) -> list[str]:
    lines = system_prompt(request).split("\n")
    if MEMORY_HEADER not in lines:
        return []
    start = lines.index(MEMORY_HEADER) + 1
    return [line for line in lines[start:] if line.startswith("- [")]


async def _create(running: Running, token: str, agent_id: str, type_: str, content: str, importance: int) -> None:
    body = {"type": type_, "content": content, "importance": importance}
    response = await running.client.post(f"/api/agents/{agent_id}/memories", json=body, headers=auth(token))
    assert response.status_code == 201, response.text


async def _library(running: Running) -> tuple[str, str]:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    await _create(running, token, agent_id, "boundary", "我不想聊工作", 2)
    await _create(running, token, agent_id, "preference", "我养了一只橘猫，叫橙子", 3)
    await _create(running, token, agent_id, "preference", "我喜欢看恐怖电影", 5)
    await _create(running, token, agent_id, "conversation_style", "说话简短一点", 4)
    await _create(running, token, agent_id, "preference", "我喜欢吃火锅", 3)
    return token, agent_id


async def _prompt_memories(running: Running, upstream: TestUpstream, token: str, agent_id: str, text: str) -> list[str]:
    upstream.script(Reply(text=REPLY))
    response = await chat(running, token, agent_id, text)
    assert response.status_code == 200
    return _memory_lines(upstream.chat_requests[-1])


async def test_ranked_recall_puts_boundaries_first_then_importance_recency_and_similarity(
    serve: Serve, upstream: TestUpstream
) -> None:
    # embedding the question gets time enough on a loaded machine (the timeout has its own test below)
    running = await serve(memory_recall="ranked", memory_injection_limit=3, memory_recall_timeout_s=60.0)
    token, agent_id = await _library(running)
    await _prompt_memories(running, upstream, token, agent_id, "你好")  # the memories get their vectors after it
    lines = await _prompt_memories(running, upstream, token, agent_id, "橙子最近不爱吃饭怎么办")
    assert lines == [
        "- [边界 / 重要度 2] 我不想聊工作",
        "- [偏好 / 重要度 3] 我养了一只橘猫，叫橙子",
        "- [偏好 / 重要度 5] 我喜欢看恐怖电影",
    ]
    async with running.db.read() as session:
        stored = (await session.execute(select(Memory))).scalars().all()
    assert all(m.embedding is not None and m.embedding_model for m in stored)


async def test_ranked_recall_embeds_the_message_only_when_there_is_something_to_choose(
    serve: Serve, upstream: TestUpstream
) -> None:
    running = await serve(memory_recall="ranked", memory_injection_limit=5, memory_recall_timeout_s=60.0)
    token, agent_id = await _library(running)
    await _prompt_memories(running, upstream, token, agent_id, "你好")  # the memories get their vectors after it
    before = await scrape(running.client)
    lines = await _prompt_memories(running, upstream, token, agent_id, "橙子最近不爱吃饭怎么办")
    after = await scrape(running.client)
    # five memories, a limit of five: every one goes in, so the message is not embedded before the reply
    assert len(lines) == 5
    assert lines[0] == "- [边界 / 重要度 2] 我不想聊工作"
    assert moved(before, after, "memchat_memory_recalls_total", similarity="skipped") == 1
    assert moved(before, after, "memchat_memory_recalls_total", similarity="embedded") == 0
    await _create(running, token, agent_id, "preference", "我喜欢爬山", 4)
    await _prompt_memories(running, upstream, token, agent_id, "你好呀")  # the new memory gets its vector
    before = await scrape(running.client)
    lines = await _prompt_memories(running, upstream, token, agent_id, "橙子最近不爱吃饭怎么办")
    after = await scrape(running.client)
    # six for five places: similarity chooses, so the cat stays and something else is left out
    assert len(lines) == 5
    assert "- [偏好 / 重要度 3] 我养了一只橘猫，叫橙子" in lines
    assert moved(before, after, "memchat_memory_recalls_total", similarity="embedded") == 1
    assert moved(before, after, "memchat_memory_recalls_total", similarity="skipped") == 0


async def test_ranked_recall_keeps_within_the_character_budget(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(memory_recall="ranked", memory_injection_limit=10, memory_recall_char_budget=16)
    token, agent_id = await _library(running)
    lines = await _prompt_memories(running, upstream, token, agent_id, "橙子最近不爱吃饭怎么办")
    contents = [line.split("] ", 1)[1] for line in lines]
    assert contents[0] == "我不想聊工作"
    assert sum(len(c) for c in contents) <= 16
    assert "我养了一只橘猫，叫橙子" not in contents  # 11 characters: does not fit after the boundary


async def test_ranked_recall_without_similarity_when_the_embedding_times_out(
    serve: Serve, upstream: TestUpstream
) -> None:
    running = await serve(memory_recall="ranked", memory_injection_limit=3, memory_recall_timeout_s=1e-9)
    token, agent_id = await _library(running)
    await _prompt_memories(running, upstream, token, agent_id, "你好")
    # a question this process has not embedded before (a text embedded moments before is reused at once)
    question = f"橙子最近不爱吃饭怎么办，都{random.randrange(100, 1000)}克了"
    lines = await _prompt_memories(running, upstream, token, agent_id, question)
    assert lines == [
        "- [边界 / 重要度 2] 我不想聊工作",
        "- [偏好 / 重要度 5] 我喜欢看恐怖电影",
        "- [对话风格 / 重要度 4] 说话简短一点",
    ]


async def test_the_seed_v1_profile_is_exactly_v1(running: Running, upstream: TestUpstream, settings: Settings) -> None:
    defaults = Settings(_env_file=None, profile="seed-v1")  # type: ignore[call-arg]
    assert (defaults.memory.extractor, defaults.summary.strategy, defaults.memory.recall) == ("rules", "rules", "v1")
    assert defaults.resolved_embeddings_provider is None
    assert running.state.chat.memory.embeddings is None

    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    await _create(running, token, agent_id, "boundary", "我不想聊工作", 2)
    await _create(running, token, agent_id, "preference", "我喜欢看恐怖电影", 5)
    await _create(running, token, agent_id, "conversation_style", "说话简短一点", 4)
    upstream.script(Reply(text=REPLY))
    # no settle: v1 rules run inline, the memory is there when the body ends
    response = await running.client.post("/api/chat", json=chat_body(agent_id, "我喜欢猫"), headers=auth(token))
    assert response.text == REPLY
    assert "我喜欢猫" in [m["content"] for m in await memories(running, token, agent_id)]
    await running.settle()
    assert _memory_lines(upstream.chat_requests[-1]) == [  # v1 order: importance desc, updated desc
        "- [偏好 / 重要度 5] 我喜欢看恐怖电影",
        "- [对话风格 / 重要度 4] 说话简短一点",
        "- [边界 / 重要度 2] 我不想聊工作",
    ]
    assert completions(upstream) == []  # no second LLM call
    async with running.db.read() as session:
        assert all(m.embedding is None for m in (await session.execute(select(Memory))).scalars())
        states = {
            m.extraction_state for m in (await session.execute(select(Message))).scalars() if m.role == "assistant"
        }
    assert states == {"done"}
    conversation = (await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))).json()
    assert conversation["summary"] == build_conversation_summary(None, [], "我喜欢猫", REPLY)


async def _summary(running: Running, token: str, agent_id: str) -> str:
    response = await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))
    summary: str = response.json()["summary"]
    return summary


async def test_llm_summary_lands_every_n_turns_and_the_rules_roll_on_top(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(summary_strategy="llm", summary_every_n_turns=2)
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    upstream.script(Reply(text="猫很可爱。"))
    await chat(running, token, agent_id, "今天看到一只猫")
    assert completions(upstream) == []  # one turn: not due
    rule_summary = await _summary(running, token, agent_id)

    upstream.script(Reply(text="那就多去看看它。"), Reply(text="摘要：用户今天看到一只猫，Agent 鼓励他多去看看。"))
    await chat(running, token, agent_id, "我想明天再去看它")
    [request] = completions(upstream)
    prompt = request["messages"][1]["content"]
    assert "已有摘要：（无）" in prompt
    assert "用户：今天看到一只猫" in prompt
    assert "Agent：那就多去看看它。" in prompt
    landed = "用户今天看到一只猫，Agent 鼓励他多去看看。"
    assert await _summary(running, token, agent_id) == landed
    assert rule_summary != landed

    upstream.script(Reply(text="好呀。"))
    await chat(running, token, agent_id, "你觉得呢")
    assert "此前对话摘要：" + landed in system_prompt(upstream.chat_requests[-1])
    assert (await _summary(running, token, agent_id)).startswith("既有摘要：" + landed)
    assert len(completions(upstream)) == 1  # one turn since the LLM summary: not due

    upstream.script(Reply(text="嗯。"), Reply(text="用户打算明天再去看猫。"))
    await chat(running, token, agent_id, "那我明天去")
    second = completions(upstream)[-1]["messages"][1]["content"]
    assert "已有摘要：" + landed in second
    assert "今天看到一只猫" not in second.split("新增对话：")[1]  # only the turns since
    assert await _summary(running, token, agent_id) == "用户打算明天再去看猫。"


async def test_llm_summary_failure_keeps_the_rule_summary(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(summary_strategy="llm", summary_every_n_turns=1)
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    upstream.script(Reply(text=REPLY), Reply(status=500))
    await chat(running, token, agent_id, "今天有点累")
    assert await _summary(running, token, agent_id) == build_conversation_summary(None, [], "今天有点累", REPLY)
    upstream.script(Reply(text=REPLY), Reply(text="   "))  # an empty answer is a failure too
    await chat(running, token, agent_id, "想早点睡")
    assert (await _summary(running, token, agent_id)).startswith("既有摘要：用户：今天有点累")
    assert len(completions(upstream)) == 2
