from typing import Any

from sqlalchemy import func, select

from memchat.models import Conversation, Memory, Message
from tests.conftest import Running, auth, chat, create_agent
from tests.upstream import TestUpstream

FULL_PROFILE = {
    "status": "在线",
    "lastActive": "刚刚",
    "relationship": "朋友",
    "headline": "h",
    "topic": "t",
    "chemistryLabel": "心动",
    "chemistry": "60",
    "rhythm": "r",
    "profileNote": "n",
}


async def test_create_get_patch(running: Running, user_token: str) -> None:
    agent = await create_agent(running.client, user_token, defaultPrompt="你是阿青。", profile=FULL_PROFILE)
    assert agent["profile"] == FULL_PROFILE
    assert agent["latestMessage"] is None
    assert agent["lastMessageAtMs"] is None
    response = await running.client.patch(
        f"/api/agents/{agent['id']}",
        json={"name": "阿青", "profile": {"relationship": "恋人"}},
        headers=auth(user_token),
    )
    assert response.status_code == 200
    patched = response.json()
    assert patched["name"] == "阿青"
    assert patched["handle"] == "@lin"
    assert patched["profile"] == {**FULL_PROFILE, "relationship": "恋人"}
    fetched = (await running.client.get(f"/api/agents/{agent['id']}", headers=auth(user_token))).json()
    assert fetched == patched


async def test_validation(running: Running, user_token: str) -> None:
    for body in [{}, {"name": ""}, {"name": 3}, {"name": "a", "profile": {"status": ["x"]}}]:
        response = await running.client.post("/api/agents", json=body, headers=auth(user_token))
        assert response.status_code == 422, body
    long = "长" * (running.state.settings.limits.max_profile_field_chars + 1)
    response = await running.client.post(
        "/api/agents", json={"name": "a", "profile": {"headline": long}}, headers=auth(user_token)
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "field_too_long"
    listed = (await running.client.get("/api/agents", headers=auth(user_token))).json()["agents"]
    assert listed == []


async def test_chemistry_may_be_a_number_and_is_stored_as_text(
    running: Running, user_token: str, upstream: TestUpstream
) -> None:
    """The seed's frontend sends 心动值 as a number (78); memchat keeps the field as text."""
    agent = await create_agent(running.client, user_token, profile={"chemistryLabel": "心动", "chemistry": 78})
    assert agent["profile"]["chemistry"] == "78"
    url = f"/api/agents/{agent['id']}"
    for sent, stored in [(80.0, "80"), (7.5, "7.5"), ("九十", "九十")]:
        response = await running.client.patch(url, json={"profile": {"chemistry": sent}}, headers=auth(user_token))
        assert response.status_code == 200, sent
        assert response.json()["profile"]["chemistry"] == stored
    fetched = (await running.client.get(url, headers=auth(user_token))).json()
    assert fetched["profile"] == {**agent["profile"], "chemistry": "九十"}
    await chat(running, user_token, agent["id"], "你好")
    profile_message = upstream.chat_requests[-1]["messages"][1]["content"]
    assert "心动值：心动 九十" in profile_message


async def test_numbers_are_refused_where_they_mean_nothing(running: Running, user_token: str) -> None:
    for profile in [{"status": 5}, {"chemistry": True}, {"relationship": 1.5}]:
        response = await running.client.post(
            "/api/agents", json={"name": "a", "profile": profile}, headers=auth(user_token)
        )
        assert response.status_code == 422, profile
        assert response.json()["error"]["code"] == "invalid_input"
    listed = (await running.client.get("/api/agents", headers=auth(user_token))).json()["agents"]
    assert listed == []


async def test_unknown_agent_is_404(running: Running, user_token: str) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        response = await running.client.request(
            method, "/api/agents/nope", json={"name": "x"} if method == "PATCH" else None, headers=auth(user_token)
        )
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "agent_not_found"


async def test_delete_removes_conversations_messages_and_memories(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    keep = await create_agent(running.client, user_token, name="留")
    await chat(running, user_token, agent["id"], "我喜欢猫")
    await chat(running, user_token, keep["id"], "我喜欢狗")
    response = await running.client.delete(f"/api/agents/{agent['id']}", headers=auth(user_token))
    assert response.status_code == 204
    assert (await running.client.get(f"/api/agents/{agent['id']}", headers=auth(user_token))).status_code == 404
    async with running.db.read() as session:
        for model in (Conversation, Message, Memory):
            gone = await session.execute(select(func.count()).select_from(model).where(model.agent_id == agent["id"]))
            kept = await session.execute(select(func.count()).select_from(model).where(model.agent_id == keep["id"]))
            assert gone.scalar_one() == 0, model
            assert kept.scalar_one() > 0, model
