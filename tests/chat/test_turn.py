"""The whole turn through the HTTP API, against the real test upstream, on both databases."""

from typing import Any

from sqlalchemy import select

from memchat.memories.service import save_candidates
from memchat.memories.types import MemoryDraft
from memchat.models import Agent, Conversation, Memory, Message
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, chat_body, create_agent, serve_app, signup
from tests.upstream import DEFAULT_REPLY, Reply, TestUpstream

SYSTEM_DEFAULT = (
    "你是 AI Agent Web 控制台里的聊天陪伴助手。\n"
    "请基于当前聊天对象、关系氛围和用户意图，用简洁、自然的中文回答用户。\n"
    "如果用户要求起草回复，请直接给出可发送的聊天内容，避免正式公文格式和职场汇报语气。\n"
    "你的建议应尊重双方边界，避免操控式话术、制造焦虑或诱导过度解读。"
)

PROFILE = {
    "status": "在线",
    "lastActive": "刚刚",
    "relationship": "暧昧期",
    "headline": "周末计划",
    "topic": "徒步",
    "chemistryLabel": "心动",
    "chemistry": "78",
    "rhythm": "晚上聊",
    "profileNote": "慢热",
}
PROFILE_TEXT = (
    "聊天对象：小林（@lin）\n对象状态：在线，刚刚\n关系阶段：暧昧期\n聊天主题：周末计划\n"
    "共同点：徒步\n心动值：心动 78\n互动节奏：晚上聊\n对象备注：慢热"
)


async def messages_of(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    assert response.status_code == 200
    page: list[dict[str, Any]] = response.json()["messages"]
    return page


async def conversation_of(running: Running, token: str, agent_id: str) -> dict[str, Any]:
    response = await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))
    assert response.status_code == 200
    conversation: dict[str, Any] = response.json()
    return conversation


async def test_first_turn_prompt_is_exact(running: Running, user_token: str, upstream: TestUpstream) -> None:
    agent = await create_agent(running.client, user_token, profile=PROFILE)
    response = await chat(running, user_token, agent["id"], "  今天好累\r\n ")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.text == DEFAULT_REPLY
    [request] = upstream.chat_requests
    assert request["stream"] is True
    assert request["model"] == "test-model"
    assert request["messages"] == [
        {"role": "system", "content": SYSTEM_DEFAULT},
        {"role": "user", "content": PROFILE_TEXT},
        {"role": "user", "content": "今天好累"},
    ]


async def test_second_turn_has_history_without_current_message_summary_and_memories(
    running: Running, user_token: str, upstream: TestUpstream
) -> None:
    agent = await create_agent(running.client, user_token, profile=PROFILE, defaultPrompt="你是阿青。")
    upstream.script(Reply(text="辛苦了"), Reply(text="好的"))
    await chat(running, user_token, agent["id"], "我不喜欢被催促")
    await chat(running, user_token, agent["id"], "周末去爬山吧")
    second = upstream.chat_requests[1]["messages"]
    assert second[0]["content"] == (
        "你是阿青。\n" + SYSTEM_DEFAULT.split("\n", 1)[1] + "\n以下是用户与该 Agent 的长期记忆，请优先尊重：\n"
        "- [边界 / 重要度 5] 我不喜欢被催促\n"
        "此前对话摘要：用户：我不喜欢被催促 Agent：辛苦了"
    )
    assert second[1:] == [
        {"role": "user", "content": PROFILE_TEXT},
        {"role": "user", "content": "我不喜欢被催促"},
        {"role": "assistant", "content": "辛苦了"},
        {"role": "user", "content": "周末去爬山吧"},
    ]


async def test_recent_message_limit_and_memory_injection_limit(
    running: Running, user_token: str, upstream: TestUpstream
) -> None:
    running.state.chat.limits.recent_message_limit = 3
    running.state.chat.memory.injection_limit = 2
    agent = await create_agent(running.client, user_token)
    for importance, content in [(3, "a"), (5, "b"), (4, "c")]:
        await running.client.post(
            f"/api/agents/{agent['id']}/memories",
            json={"type": "preference", "content": content, "importance": importance},
            headers=auth(user_token),
        )
    for text in ["一", "二", "三"]:
        upstream.script(Reply(text=f"回{text}"))
        await chat(running, user_token, agent["id"], text)
    last = upstream.chat_requests[-1]["messages"]
    assert "- [偏好 / 重要度 5] b\n- [偏好 / 重要度 4] c" in last[0]["content"]
    assert "重要度 3" not in last[0]["content"]
    assert [m["content"] for m in last[2:]] == ["回一", "二", "回二", "三"]


async def test_turn_counts_summary_and_preview(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    await chat(running, user_token, agent["id"], "你好")
    await chat(running, user_token, agent["id"], "在吗")
    conversation = await conversation_of(running, user_token, agent["id"])
    assert conversation["messageCount"] == 4
    # previous summary, then the recent history (the first turn again), then this turn
    first = f"用户：你好 Agent：{DEFAULT_REPLY}"
    assert conversation["summary"] == f"既有摘要：{first} {first} 用户：在吗 Agent：{DEFAULT_REPLY}"
    stored = await messages_of(running, user_token, agent["id"])
    assert [(m["role"], m["parts"][0]["text"], m["status"]) for m in stored] == [
        ("user", "你好", "completed"),
        ("assistant", DEFAULT_REPLY, "completed"),
        ("user", "在吗", "completed"),
        ("assistant", DEFAULT_REPLY, "completed"),
    ]
    assert conversation["lastMessageAtMs"] == stored[-1]["createdAtMs"]
    shown = (await running.client.get(f"/api/agents/{agent['id']}", headers=auth(user_token))).json()
    assert shown["latestMessage"] == DEFAULT_REPLY
    assert shown["latestMessageAtMs"] == stored[-1]["createdAtMs"]
    assert shown["lastMessageAtMs"] == conversation["lastMessageAtMs"]


async def test_upstream_500_before_text_keeps_user_message(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(status=500))
    response = await chat(running, user_token, agent["id"], "你还在吗")
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_error"
    stored = await messages_of(running, user_token, agent["id"])
    assert [(m["role"], m["parts"][0]["text"]) for m in stored] == [("user", "你还在吗")]
    conversation = await conversation_of(running, user_token, agent["id"])
    assert conversation["messageCount"] == 1
    assert conversation["lastMessageAtMs"] == stored[0]["createdAtMs"]


async def test_upstream_429_maps_to_503(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(status=429))
    response = await chat(running, user_token, agent["id"], "hi")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "upstream_rate_limited"
    assert "Traceback" not in response.text


async def test_upstream_with_no_text_is_a_failure(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(no_content=True))
    response = await chat(running, user_token, agent["id"], "hi")
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_empty"
    stored = await messages_of(running, user_token, agent["id"])
    assert [m["role"] for m in stored] == ["user"]


async def test_stream_cut_after_some_text_is_saved_incomplete(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(deltas=["一", "二", "三", "四"], cut_after=2))
    response = await chat(running, user_token, agent["id"], "说吧")
    assert response.status_code == 200
    assert response.text == "一二"
    stored = await messages_of(running, user_token, agent["id"])
    assert [(m["role"], m["parts"][0]["text"], m["status"]) for m in stored][-1] == ("assistant", "一二", "incomplete")
    assert (await conversation_of(running, user_token, agent["id"]))["messageCount"] == 2


async def test_stream_without_finish_reason_is_incomplete(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(text="好的好的", finish_reason=None))
    await chat(running, user_token, agent["id"], "嗯")
    stored = await messages_of(running, user_token, agent["id"])
    assert stored[-1]["status"] == "incomplete"
    assert stored[-1]["parts"][0]["text"] == "好的好的"


async def test_client_disconnect_mid_stream_still_saves_the_reply(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(deltas=["第一段", "第二段", "第三段"], hold_after=1))
    body = chat_body(agent["id"], "我喜欢慢慢聊")
    async with running.client.stream("POST", "/api/chat", json=body, headers=auth(user_token)) as response:
        assert response.status_code == 200
        first = await anext(response.aiter_text())
        assert first == "第一段"
    # The client is gone; the upstream now finishes the reply.
    upstream.release()
    await running.settle()
    stored = await messages_of(running, user_token, agent["id"])
    assert [(m["role"], m["parts"][0]["text"], m["status"]) for m in stored] == [
        ("user", "我喜欢慢慢聊", "completed"),
        ("assistant", "第一段第二段第三段", "completed"),
    ]
    conversation = await conversation_of(running, user_token, agent["id"])
    assert conversation["messageCount"] == 2
    assert conversation["summary"] == "用户：我喜欢慢慢聊 Agent：第一段第二段第三段"
    memories = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))).json()
    assert [m["content"] for m in memories["memories"]] == ["我喜欢慢慢聊"]


async def test_deltas_reach_the_client_before_the_stream_ends(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(deltas=["先到", "后到"], hold_after=1))
    body = chat_body(agent["id"], "hi")
    async with running.client.stream("POST", "/api/chat", json=body, headers=auth(user_token)) as response:
        chunks = response.aiter_text()
        assert await anext(chunks) == "先到"  # arrives while the upstream still holds the rest
        upstream.release()
        assert "".join([c async for c in chunks]) == "后到"
    await running.settle()


async def test_extracted_memory_points_at_the_user_message(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    await chat(running, user_token, agent["id"], "以后回复短一点")
    await chat(running, user_token, agent["id"], "以后回复短一点")  # exact duplicate: skipped
    await chat(running, user_token, agent["id"], "今天天气不错")  # nothing to remember
    memories = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))).json()
    [memory] = memories["memories"]
    stored = await messages_of(running, user_token, agent["id"])
    assert memory["sourceMessageId"] == stored[0]["id"]
    assert (memory["type"], memory["importance"], memory["status"]) == ("conversation_style", 5, "active")


async def test_at_most_two_candidates_per_turn_are_saved(running: Running, user_token: str) -> None:
    agent = await create_agent(running.client, user_token)
    candidates = [MemoryDraft("preference", f"我喜欢{i}", 3) for i in range(3)]
    async with running.db.write() as session:
        user_id = (await session.execute(select(Agent.user_id).where(Agent.id == agent["id"]))).scalar_one()
        created = await save_candidates(
            session,
            user_id=user_id,
            agent_id=agent["id"],
            candidates=candidates,
            source_message_id=None,
            max_memories=running.state.settings.limits.max_memories_per_agent,
        )
    assert len(created) == 2
    async with running.db.read() as session:
        contents = (await session.execute(select(Memory.content).where(Memory.agent_id == agent["id"]))).scalars()
        assert sorted(contents) == ["我喜欢0", "我喜欢1"]


async def test_compatibility_path_without_agent(running: Running, user_token: str, upstream: TestUpstream) -> None:
    body = {
        "id": "c",
        "trigger": "submit-message",
        "messages": [
            {"id": "1", "role": "user", "parts": [{"type": "text", "text": "你好"}]},
            {
                "id": "2",
                "role": "assistant",
                "parts": [{"type": "step-start"}, {"type": "text", "text": "嗨", "state": "done"}],
            },
            {"id": "3", "role": "user", "parts": [{"type": "text", "text": "在干嘛"}]},
        ],
        "conversation": {"name": "小林", "handle": "@lin", "chemistry": 78},
    }
    response = await running.client.post("/api/chat", json=body, headers=auth(user_token))
    await running.settle()
    assert response.status_code == 200
    assert response.text == DEFAULT_REPLY
    [request] = upstream.chat_requests
    assert request["messages"][0] == {"role": "system", "content": SYSTEM_DEFAULT}
    assert request["messages"][1]["content"].startswith("聊天对象：小林（@lin）\n对象状态：，\n")
    assert "心动值： 78" in request["messages"][1]["content"]
    assert request["messages"][2:] == [
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "嗨"},
        {"role": "user", "content": "在干嘛"},
    ]
    async with running.db.read() as session:
        assert (await session.execute(select(Message))).first() is None


async def test_conversation_override_in_request(running: Running, user_token: str, upstream: TestUpstream) -> None:
    agent = await create_agent(running.client, user_token, profile=PROFILE)
    await chat(running, user_token, agent["id"], "hi", conversation={"status": "忙碌", "relationship": "朋友"})
    profile = upstream.chat_requests[0]["messages"][1]["content"]
    assert "对象状态：忙碌，刚刚" in profile
    assert "关系阶段：朋友" in profile
    assert "共同点：徒步" in profile


async def test_conversation_id_must_belong_to_the_agent(running: Running, user_token: str) -> None:
    first = await create_agent(running.client, user_token, name="甲")
    second = await create_agent(running.client, user_token, name="乙")
    other = await conversation_of(running, user_token, second["id"])
    response = await chat(running, user_token, first["id"], "hi", conversationId=other["id"])
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "conversation_not_found"
    assert await messages_of(running, user_token, first["id"]) == []
    mine = await conversation_of(running, user_token, first["id"])
    response = await chat(running, user_token, first["id"], "hi", conversationId=mine["id"])
    assert response.status_code == 200


async def test_agent_list_rises_as_soon_as_the_user_writes(
    running: Running, user_token: str, upstream: TestUpstream
) -> None:
    older = await create_agent(running.client, user_token, name="早")
    newer = await create_agent(running.client, user_token, name="晚")
    listed = (await running.client.get("/api/agents", headers=auth(user_token))).json()["agents"]
    assert [a["name"] for a in listed] == ["晚", "早"]
    upstream.script(Reply(status=500))  # no reply at all: the user's message alone moves the agent up
    await chat(running, user_token, older["id"], "在吗")
    listed = (await running.client.get("/api/agents", headers=auth(user_token))).json()["agents"]
    assert [a["name"] for a in listed] == ["早", "晚"]
    assert listed[0]["lastMessageAtMs"] is not None
    assert listed[1]["id"] == newer["id"]
    assert listed[1]["lastMessageAtMs"] is None


async def test_message_count_matches_stored_messages(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    upstream.script(Reply(), Reply(status=500), Reply(deltas=["a", "b"], cut_after=1), Reply())
    for text in ["一", "二", "三", "四"]:
        await chat(running, user_token, agent["id"], text)
    async with running.db.read() as session:
        conversation = (await session.execute(select(Conversation))).scalar_one()
        stored = (
            (await session.execute(select(Message).where(Message.conversation_id == conversation.id))).scalars().all()
        )
    assert conversation.message_count == len(stored) == 7


async def test_unknown_route_and_streaming_error_are_json(running: Running) -> None:
    response = await running.client.get("/api/nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] in {"not_found", "route_not_found"}


async def test_unreachable_upstream_is_a_502(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    from memchat.llm.client import LLMClient

    running.state.chat.llm = LLMClient(
        base_url="http://127.0.0.1:9/v1", api_key="x", model="m", connect_timeout_s=1, read_timeout_s=1, max_retries=0
    )
    try:
        response = await chat(running, user_token, agent["id"], "hi")
    finally:
        await running.state.chat.llm.aclose()
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_unreachable"
    assert len(await messages_of(running, user_token, agent["id"])) == 1


async def test_upstream_silent_past_the_read_timeout_is_a_504(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    from memchat.llm.client import LLMClient

    running.state.chat.llm = LLMClient(
        base_url=upstream.base_url, api_key="x", model="m", connect_timeout_s=1, read_timeout_s=0.3, max_retries=0
    )
    upstream.script(Reply(deltas=["晚了"], hold_after=0))
    try:
        response = await chat(running, user_token, agent["id"], "hi")
    finally:
        upstream.release()
        await running.state.chat.llm.aclose()
    assert response.status_code == 504
    assert response.json()["error"]["code"] == "upstream_timeout"
    stored = await messages_of(running, user_token, agent["id"])
    assert [(m["role"], m["parts"][0]["text"]) for m in stored] == [("user", "hi")]


async def test_the_turn_sends_empty_profile_fields_as_the_seed_does_unless_told_to_omit_them(
    settings: Settings, upstream: TestUpstream
) -> None:
    for mode, expected in (
        (
            "kept",
            "聊天对象：测试助手（）\n对象状态：，\n关系阶段：\n聊天主题：\n共同点：\n心动值： \n互动节奏：\n对象备注：",
        ),
        ("omitted", "聊天对象：测试助手"),
    ):
        async with serve_app(settings, empty_profile_fields=mode) as served:
            token = await signup(served.client)
            agent = await create_agent(served.client, token, name="测试助手", handle="")
            assert (await chat(served, token, agent["id"], "你好")).status_code == 200
        assert upstream.chat_requests[-1]["messages"][1] == {"role": "user", "content": expected}
