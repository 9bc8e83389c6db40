"""An agent's conversations: list, create, rename, delete, and chatting in one beside the default."""

import asyncio
from typing import Any

from tests.conftest import Running, auth, chat, chat_body, create_agent, signup
from tests.upstream import Reply, TestUpstream


async def conversations(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/conversations", headers=auth(token))
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()["conversations"]
    return listed


async def new_conversation(running: Running, token: str, agent_id: str, **body: Any) -> dict[str, Any]:
    response = await running.client.post(f"/api/agents/{agent_id}/conversations", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def texts(running: Running, token: str, conversation_id: str) -> list[str]:
    response = await running.client.get(f"/api/conversations/{conversation_id}/messages", headers=auth(token))
    assert response.status_code == 200, response.text
    return [m["parts"][0]["text"] for m in response.json()["messages"]]


async def test_the_default_conversation_is_always_listed(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    listed = await conversations(running, user_token, agent["id"])
    assert len(listed) == 1
    assert listed[0]["isDefault"] is True
    assert listed[0]["title"] is None
    assert listed[0]["messageCount"] == 0
    default = await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(user_token))
    assert default.json()["id"] == listed[0]["id"]


async def test_each_conversation_has_its_own_history_summary_and_count_and_memories_stay_per_agent(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    await chat(running, user_token, agent["id"], "我喜欢猫")
    second = await new_conversation(running, user_token, agent["id"], title="  周末计划 ")
    assert second["title"] == "周末计划"
    assert second["isDefault"] is False
    assert second["messageCount"] == 0
    response = await chat(running, user_token, agent["id"], "周末去爬山", conversationId=second["id"])
    assert response.status_code == 200, response.text

    listed = await conversations(running, user_token, agent["id"])
    # The most recently active first.
    assert [c["id"] for c in listed][0] == second["id"]
    by_id = {c["id"]: c for c in listed}
    default = next(c for c in listed if c["isDefault"])
    assert by_id[second["id"]]["messageCount"] == 2
    assert default["messageCount"] == 2
    assert "周末去爬山" in by_id[second["id"]]["summary"]
    assert "周末去爬山" not in default["summary"]
    assert "我喜欢猫" in default["summary"]

    assert (await texts(running, user_token, second["id"]))[0] == "周末去爬山"
    agent_history = await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(user_token))
    assert [m["parts"][0]["text"] for m in agent_history.json()["messages"]][0] == "我喜欢猫"

    # The memory from the default conversation is in the other conversation's prompt too.
    memories = await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))
    assert any("猫" in m["content"] for m in memories.json()["memories"])


async def test_rename_and_clear_the_title(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    created = await new_conversation(running, user_token, agent["id"])
    assert created["title"] is None
    url = f"/api/conversations/{created['id']}"
    renamed = await running.client.patch(url, json={"title": "旅行"}, headers=auth(user_token))
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["title"] == "旅行"
    assert (await running.client.get(url, headers=auth(user_token))).json()["title"] == "旅行"
    cleared = await running.client.patch(url, json={"title": "   "}, headers=auth(user_token))
    assert cleared.json()["title"] is None
    too_long = await running.client.patch(url, json={"title": "长" * 201}, headers=auth(user_token))
    assert too_long.status_code == 422
    assert too_long.json()["error"]["code"]
    assert (await running.client.get(url, headers=auth(user_token))).json()["title"] is None


async def test_delete_takes_the_messages_and_keeps_the_memories(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    created = await new_conversation(running, user_token, agent["id"])
    await chat(running, user_token, agent["id"], "我喜欢猫", conversationId=created["id"])
    memories_before = await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))
    assert memories_before.json()["memories"]

    response = await running.client.delete(f"/api/conversations/{created['id']}", headers=auth(user_token))
    assert response.status_code == 204
    gone = await running.client.get(f"/api/conversations/{created['id']}/messages", headers=auth(user_token))
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "conversation_not_found"
    assert created["id"] not in [c["id"] for c in await conversations(running, user_token, agent["id"])]
    memories_after = await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))
    assert memories_after.json()["memories"] == memories_before.json()["memories"]
    # A turn in a deleted conversation is a 404, not a new conversation.
    again = await chat(running, user_token, agent["id"], "还在吗", conversationId=created["id"])
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "conversation_not_found"


async def test_delete_is_refused_while_a_reply_streams(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    created = await new_conversation(running, user_token, agent["id"])
    upstream.script(Reply(deltas=["一", "二"], hold_after=1))
    body = chat_body(agent["id"], "你好", conversationId=created["id"])
    turn = asyncio.create_task(running.client.post("/api/chat", json=body, headers=auth(user_token)))
    assert await asyncio.to_thread(upstream.wait_stream_started)
    refused = await running.client.delete(f"/api/conversations/{created['id']}", headers=auth(user_token))
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "turn_in_progress"
    upstream.release()
    assert (await turn).text == "一二"
    await running.settle()
    assert await texts(running, user_token, created["id"]) == ["你好", "一二"]
    deleted = await running.client.delete(f"/api/conversations/{created['id']}", headers=auth(user_token))
    assert deleted.status_code == 204


async def test_another_users_conversations_are_not_found(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    created = await new_conversation(running, user_token, agent["id"])
    other = await signup(running.client)
    await create_agent(running.client, other)
    url = f"/api/conversations/{created['id']}"
    for response in (
        await running.client.get(url, headers=auth(other)),
        await running.client.get(f"{url}/messages", headers=auth(other)),
        await running.client.patch(url, json={"title": "x"}, headers=auth(other)),
        await running.client.delete(url, headers=auth(other)),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "conversation_not_found"
    for response in (
        await running.client.get(f"/api/agents/{agent['id']}/conversations", headers=auth(other)),
        await running.client.post(f"/api/agents/{agent['id']}/conversations", json={}, headers=auth(other)),
    ):
        assert response.status_code == 404
    still = await running.client.get(url, headers=auth(user_token))
    assert still.json()["title"] is None
