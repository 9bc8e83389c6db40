"""POST /api/agents/{id}/import: an existing conversation becomes the agent's history, memories extracted
in the background and reported as progress; bad input changes nothing; the same import twice lands once."""

import asyncio
from typing import Any

import httpx
from sqlalchemy import func, select

from memchat.chat.digest_summary import NOTE
from memchat.chat.summary import build_conversation_summary
from memchat.imports.schemas import MAX_IMPORT_MESSAGES
from memchat.models import Conversation, Message
from tests.conftest import Running, auth, create_agent, signup
from tests.memories.support import Serve, serve_fixture  # noqa: F401

T0 = 1_700_000_000_000
OPENAI = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "你好，我叫林晓", "timestamp": T0},
    {"role": "assistant", "content": "你好林晓！", "timestamp": T0 + 1000},
    {"role": "user", "content": [{"type": "text", "text": "以后不要叫我宝贝"}], "timestamp": "2023-11-14T22:20:00Z"},
    {"role": "assistant", "content": "好的，记住了。"},
]


async def _post(running: Running, token: str, agent_id: str, body: Any, **headers: str) -> httpx.Response:
    return await running.client.post(f"/api/agents/{agent_id}/import", json=body, headers={**auth(token), **headers})


async def _finished(running: Running, token: str, agent_id: str, import_id: str) -> dict[str, Any]:
    await running.state.background.drain()
    response = await running.client.get(f"/api/agents/{agent_id}/imports/{import_id}", headers=auth(token))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _history(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


async def _counts(running: Running) -> tuple[int, int]:
    async with running.state.db.read() as session:
        stored = (await session.execute(select(func.count()).select_from(Message))).scalar_one()
        conversations = (await session.execute(select(func.count()).select_from(Conversation))).scalar_one()
    return int(stored), int(conversations)


async def test_openai_messages_become_the_default_conversation(running: Running) -> None:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    response = await _post(running, token, agent_id, {"messages": OPENAI})
    assert response.status_code == 202, response.text
    started = response.json()
    assert started["messages"] == 4
    assert started["total"] == 2

    done = await _finished(running, token, agent_id, started["id"])
    assert done == {**started, "state": "done", "processed": 2}

    history = await _history(running, token, agent_id)
    assert [(m["role"], m["parts"][0]["text"]) for m in history] == [
        ("user", "你好，我叫林晓"),
        ("assistant", "你好林晓！"),
        ("user", "以后不要叫我宝贝"),
        ("assistant", "好的，记住了。"),
    ]
    # times as given; a message without one takes the one before it
    assert [m["createdAtMs"] for m in history] == [T0, T0 + 1000, 1_700_000_400_000, 1_700_000_400_000]

    conversation = (await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))).json()
    assert conversation["id"] == started["conversationId"]
    assert conversation["messageCount"] == 4
    first = build_conversation_summary(None, [], "你好，我叫林晓", "你好林晓！")
    recent = [("user", "你好，我叫林晓"), ("assistant", "你好林晓！")]
    assert conversation["summary"] == build_conversation_summary(first, recent, "以后不要叫我宝贝", "好的，记住了。")
    agent = (await running.client.get(f"/api/agents/{agent_id}", headers=auth(token))).json()
    assert agent["latestMessage"] == "好的，记住了。"

    memories = (await running.client.get(f"/api/agents/{agent_id}/memories", headers=auth(token))).json()
    by_content = {m["content"]: m for m in memories["memories"]}
    assert by_content["以后不要叫我宝贝"]["type"] == "boundary"
    assert by_content["以后不要叫我宝贝"]["sourceMessageId"] == history[2]["id"]


async def test_history_shape_into_a_new_conversation_when_the_default_has_messages(running: Running) -> None:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    first = await _post(running, token, agent_id, {"messages": OPENAI})
    history = await _history(running, token, agent_id)  # the history endpoint's shape, as exported
    second = await _post(running, token, agent_id, {"messages": history, "title": "旧手机上的聊天"})
    assert second.status_code == 202, second.text
    imported = second.json()
    assert imported["conversationId"] != first.json()["conversationId"]
    assert imported["messages"] == 4
    listed = (await running.client.get(f"/api/agents/{agent_id}/conversations", headers=auth(token))).json()
    titles = {c["id"]: c["title"] for c in listed["conversations"]}
    assert titles[imported["conversationId"]] == "旧手机上的聊天"
    await _finished(running, token, agent_id, imported["id"])
    page = await running.client.get(f"/api/conversations/{imported['conversationId']}/messages", headers=auth(token))
    assert [m["createdAtMs"] for m in page.json()["messages"]] == [m["createdAtMs"] for m in history]


async def test_the_same_import_twice_lands_once(running: Running) -> None:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    first = await _post(running, token, agent_id, {"messages": OPENAI})
    await running.state.background.drain()
    before = await _counts(running)
    again = await _post(running, token, agent_id, {"messages": OPENAI})
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["state"] == "done"
    assert await _counts(running) == before

    keyed = await _post(running, token, agent_id, {"messages": OPENAI[:3]}, **{"Idempotency-Key": "export-1"})
    assert keyed.status_code == 202
    await running.state.background.drain()
    before = await _counts(running)
    # the same messages under the key, timestamps dropped: the same import
    resent = await _post(running, token, agent_id, {"messages": OPENAI[1:3]}, **{"Idempotency-Key": "export-1"})
    assert resent.status_code == 200
    assert resent.json()["id"] == keyed.json()["id"]
    assert resent.json()["messages"] == 2
    assert await _counts(running) == before


async def test_a_reused_idempotency_key_with_other_messages_is_a_422_and_changes_nothing(running: Running) -> None:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    keyed = await _post(running, token, agent_id, {"messages": OPENAI[:3]}, **{"Idempotency-Key": "export-1"})
    assert keyed.status_code == 202
    await running.state.background.drain()
    before = await _counts(running)
    for other in (OPENAI[:2], OPENAI, [OPENAI[1], {"role": "assistant", "content": "另一句"}]):
        reused = await _post(running, token, agent_id, {"messages": other}, **{"Idempotency-Key": "export-1"})
        assert reused.status_code == 422, reused.text
        assert reused.json()["error"]["code"] == "idempotency_key_reused"
        assert await _counts(running) == before
    # another key imports them
    fresh = await _post(running, token, agent_id, {"messages": OPENAI}, **{"Idempotency-Key": "export-2"})
    assert fresh.status_code == 202


async def test_the_same_import_sent_twice_at_once_lands_once(running: Running) -> None:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    first, second = await asyncio.gather(*(_post(running, token, agent_id, {"messages": OPENAI}) for _ in range(2)))
    assert sorted([first.status_code, second.status_code]) == [200, 202]
    assert first.json()["id"] == second.json()["id"]
    await running.state.background.drain()
    assert len(await _history(running, token, agent_id)) == 4
    listed = (await running.client.get(f"/api/agents/{agent_id}/conversations", headers=auth(token))).json()
    assert len(listed["conversations"]) == 1


async def test_bad_input_is_a_4xx_and_stores_nothing(running: Running) -> None:
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))
    before = await _counts(running)
    good = {"role": "user", "content": "你好"}
    cases = [
        ({"messages": []}, 422, "invalid_input"),
        ({"messages": [good, {"role": "robot", "content": "x"}]}, 422, "invalid_input"),
        ({"messages": [good, {"role": "user", "content": "长" * 16_001}]}, 422, "message_too_long"),
        ({"messages": [{**good, "timestamp": 1_700_000_000}]}, 422, "invalid_input"),  # seconds, not ms
        ({"messages": [{**good, "timestamp": "yesterday"}]}, 422, "invalid_input"),
        (
            {"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "  "}]},
            422,
            "nothing_to_import",
        ),
        ({"messages": [good] * (MAX_IMPORT_MESSAGES + 1)}, 422, "invalid_input"),
        ({"messages": [{"role": "user", "content": "a\u0000b"}]}, 422, "invalid_input"),
        ({"conversation": []}, 422, "invalid_input"),
    ]
    for body, status, code in cases:
        response = await _post(running, token, agent_id, body)
        assert response.status_code == status, (body, response.text)
        assert response.json()["error"]["code"] == code, response.text
    too_big = "x" * running.app.state.memchat.settings.limits.max_request_bytes
    response = await _post(running, token, agent_id, {"messages": [{"role": "user", "content": too_big}]})
    assert response.status_code == 413
    assert await _counts(running) == before


async def test_someone_elses_agent_and_unknown_imports_are_not_found(running: Running) -> None:
    owner = await signup(running.client)
    agent_id = (await create_agent(running.client, owner))["id"]
    started = (await _post(running, owner, agent_id, {"messages": OPENAI})).json()
    other = await signup(running.client)
    response = await _post(running, other, agent_id, {"messages": OPENAI})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "agent_not_found"
    seen = await running.client.get(f"/api/agents/{agent_id}/imports/{started['id']}", headers=auth(other))
    assert seen.status_code == 404
    unknown = await running.client.get(f"/api/agents/{agent_id}/imports/nope", headers=auth(owner))
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "import_not_found"
    assert (await _post(running, owner, agent_id, {"messages": OPENAI}, Authorization="Bearer x")).status_code == 401


async def test_digest_summary_over_an_imported_conversation(serve: Serve) -> None:
    running = await serve(summary_strategy="digest")
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    turns = [{"role": "user", "content": "别叫我宝贝，我不喜欢。"}, {"role": "assistant", "content": "好的。"}]
    for i in range(40):
        turns.append({"role": "user", "content": f"第{i}天的事情。" + "今天发生了很多事。" * 8})
        turns.append({"role": "assistant", "content": f"第{i}天的回答。" + "听起来很充实。" * 8})
    started = (await _post(running, token, agent_id, {"messages": turns})).json()
    assert started["messages"] == 82
    conversation = (await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))).json()
    summary = conversation["summary"]
    assert summary.startswith(NOTE + "别叫我宝贝，我不喜欢。")
    assert summary.count("第39天的事情") == 1
    assert "第0天的事情" not in summary


async def test_imported_memories_carry_the_time_the_user_said_them(serve: Serve) -> None:
    running = await serve(memory_extractor="embeddings")
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    said = "2024-03-01T02:00:00Z"  # a Friday, 10:00 in Asia/Shanghai
    body = {
        "messages": [
            {"role": "user", "content": "我下周三面试", "timestamp": said},
            {"role": "assistant", "content": "加油！"},
        ]
    }
    started = (await _post(running, token, agent_id, body)).json()
    assert (await _finished(running, token, agent_id, started["id"]))["state"] == "done"
    memories = (await running.client.get(f"/api/agents/{agent_id}/memories", headers=auth(token))).json()
    [memory] = memories["memories"]
    assert memory["validFromMs"] == 1_709_258_400_000
    assert memory["eventDate"] == "2024-03-06"  # 下周三 from the day it was said, not from today
