"""MEMCHAT_PROFILE: `standard` (the default: the best memory that needs no LLM) and `seed-v1` (the
seed's behaviour exactly). The v1 tests run under seed-v1 (tests/conftest.py); these run the default."""

import pytest

from memchat.settings import Settings
from tests.conftest import Running, auth, chat_body
from tests.memories.support import Serve, memories, serve_fixture, turn, user_with_agent  # noqa: F401
from tests.upstream import Reply, TestUpstream


def test_with_nothing_configured_the_standard_profile_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCHAT_PROFILE", raising=False)
    defaults = Settings(_env_file=None)  # type: ignore[call-arg]
    assert defaults.profile.name == "standard"
    assert (defaults.memory.extractor, defaults.memory.recall, defaults.summary.strategy) == (
        "embeddings",
        "ranked",
        "digest",
    )
    assert defaults.memory.changes == "supersede"
    assert defaults.resolved_embeddings_provider == "local"


def test_the_seed_switch_and_explicit_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCHAT_PROFILE", "seed-v1")
    seed = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (seed.memory.extractor, seed.memory.recall, seed.summary.strategy) == ("rules", "v1", "rules")
    assert seed.resolved_embeddings_provider is None
    monkeypatch.setenv("MEMCHAT_PROFILE", "standard")
    monkeypatch.setenv("MEMCHAT_SUMMARY", "llm")  # a setting of its own wins over the profile's
    mixed = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (mixed.memory.extractor, mixed.summary.strategy) == ("embeddings", "llm")
    assert mixed.replace(profile="seed-v1").memory.extractor == "rules"  # a copy takes its own profile's
    monkeypatch.setenv("MEMCHAT_PROFILE", "best")
    with pytest.raises(ValueError, match="MEMCHAT_PROFILE"):
        Settings(_env_file=None)  # type: ignore[call-arg]


async def test_the_default_profile_through_the_app(serve: Serve, upstream: TestUpstream) -> None:
    running: Running = await serve(profile="standard")
    assert running.state.chat.memory.embeddings is not None
    token, agent_id = await user_with_agent(running)
    await turn(running, upstream, token, agent_id, "我叫小林，我住在杭州。")
    await turn(running, upstream, token, agent_id, "你还记得我住在哪里吗？")  # a question is no memory
    await turn(running, upstream, token, agent_id, "I'm allergic to mangoes.")
    await running.settle()
    contents = sorted(m["content"] for m in await memories(running, token, agent_id))
    assert contents == ["I'm allergic to mangoes.", "我住在杭州。", "我叫小林。"]
    for i in range(4):
        await turn(running, upstream, token, agent_id, f"今天第{i + 1}次来聊天")
    upstream.script(Reply(text="好的。"))
    response = await running.client.post(
        "/api/chat", json=chat_body(agent_id, "晚饭吃点水果吧", message_id="last"), headers=auth(token)
    )
    assert response.status_code == 200
    system = upstream.chat_requests[-1]["messages"][0]["content"]
    assert "I'm allergic to mangoes." in system
    assert [system.count(f"用户：今天第{i + 1}次来聊天") for i in range(4)] == [1, 1, 1, 1]  # the digest: once each
    assert system.count("用户：我叫小林，我住在杭州。") == 1
    assert "既有摘要" not in system


async def test_a_background_memory_ready_in_time_rides_the_turns_own_stream(
    serve: Serve, upstream: TestUpstream
) -> None:
    from tests.chat.test_ui_stream import parse_sse

    running: Running = await serve(profile="standard", memory_stream_wait_s=10)
    token, agent_id = await user_with_agent(running)
    upstream.script(Reply(text="记住啦。"))
    response = await running.client.post(
        "/api/ui/chat", json=chat_body(agent_id, "我叫小林，我住在杭州。"), headers=auth(token)
    )
    assert response.status_code == 200
    notes = [
        p["data"]["memory"]["content"] for p in parse_sse(response.text) if p != "[DONE]" and p["type"] == "data-memory"
    ]
    assert sorted(notes) == ["我住在杭州。", "我叫小林。"]  # both, before `finish`, from the background extraction

    nothing_waits = await serve(profile="standard", memory_stream_wait_s=0)
    token, agent_id = await user_with_agent(nothing_waits)
    upstream.script(Reply(text="好的。"))
    response = await nothing_waits.client.post(
        "/api/ui/chat", json=chat_body(agent_id, "我养了一只猫，叫团子。"), headers=auth(token)
    )
    assert "data-memory" not in response.text  # not waited for: the console reads it once it is stored
    await nothing_waits.settle()
    assert [m["content"] for m in await memories(nothing_waits, token, agent_id)] == ["我养了一只猫，叫团子。"]


async def test_the_fact_a_question_needs_is_recalled_among_many_more_memories(
    serve: Serve, upstream: TestUpstream
) -> None:
    # embedding the question gets time enough on a loaded machine: the test is about relevance, not the timeout
    running: Running = await serve(profile="standard", memory_recall_timeout_s=60.0)
    token, agent_id = await user_with_agent(running)
    others = [
        ("preference", "我喜欢看恐怖电影", 5),
        ("conversation_style", "说话简短一点", 4),
        ("fact", "我在一家广告公司做设计", 4),
        ("fact", "我弟弟在读大学，学计算机", 4),
        ("preference", "我周末喜欢去爬山", 4),
        ("fact", "我养了两只仓鼠", 4),
        ("relationship_goal", "希望你多鼓励我", 4),
        ("preference", "I love jazz, especially Coltrane", 4),
        ("fact", "I work night shifts at the hospital", 4),
        ("preference", "我喜欢喝美式咖啡", 4),
        ("fact", "我最近在学吉他", 4),
        ("fact", "我闺蜜下个月结婚", 4),
        ("preference", "I prefer replies in bullet points", 4),
        ("fact", "我家住在合肥", 4),
    ]
    for type_, content, importance in [("fact", "我对芒果过敏", 4), *others]:  # the fact, said first
        body = {"type": type_, "content": content, "importance": importance}
        response = await running.client.post(f"/api/agents/{agent_id}/memories", json=body, headers=auth(token))
        assert response.status_code == 201, response.text
    await turn(running, upstream, token, agent_id, "今天有点累")
    await running.settle()
    upstream.script(Reply(text="好的。"))
    response = await running.client.post(
        "/api/chat", json=chat_body(agent_id, "晚饭后想吃点水果，你推荐几种吧"), headers=auth(token)
    )
    assert response.status_code == 200
    lines = [
        line for line in upstream.chat_requests[-1]["messages"][0]["content"].splitlines() if line.startswith("- [")
    ]
    assert len(lines) == 10  # MEMORY_INJECTION_LIMIT of the 15
    assert any("我对芒果过敏" in line for line in lines)  # relevance to the question brings it in
