import asyncio
from typing import Any

from tests.conftest import Running, auth


async def add(running: Running, token: str, agent_id: str, **body: Any) -> dict[str, Any]:
    response = await running.client.post(f"/api/agents/{agent_id}/memories", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    memory: dict[str, Any] = response.json()
    return memory


async def test_crud_and_order(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    low = await add(running, user_token, agent["id"], type="preference", content="喜欢猫", importance=2)
    high = await add(running, user_token, agent["id"], type="boundary", content="别催我", importance=5)
    newer_low = await add(running, user_token, agent["id"], type="conversation_style", content="短句", importance=2)
    listed = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))).json()
    assert [m["id"] for m in listed["memories"]] == [high["id"], newer_low["id"], low["id"]]
    assert high["sourceMessageId"] is None
    assert high["status"] == "active"

    patched = await running.client.patch(
        f"/api/memories/{low['id']}", json={"content": "很喜欢猫", "importance": 4}, headers=auth(user_token)
    )
    assert patched.status_code == 200
    assert (patched.json()["content"], patched.json()["importance"]) == ("很喜欢猫", 4)
    assert patched.json()["updatedAtMs"] >= low["updatedAtMs"]

    archived = await running.client.patch(
        f"/api/memories/{high['id']}", json={"status": "archived"}, headers=auth(user_token)
    )
    assert archived.json()["status"] == "archived"
    active = (
        await running.client.get(f"/api/agents/{agent['id']}/memories?status=active", headers=auth(user_token))
    ).json()["memories"]
    assert high["id"] not in [m["id"] for m in active]
    everything = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))).json()
    assert len(everything["memories"]) == 3

    assert (await running.client.delete(f"/api/memories/{low['id']}", headers=auth(user_token))).status_code == 204
    assert (await running.client.delete(f"/api/memories/{low['id']}", headers=auth(user_token))).status_code == 404


async def test_validation_changes_nothing(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    url = f"/api/agents/{agent['id']}/memories"
    bad_bodies = [
        {"type": "hobby", "content": "x", "importance": 3},
        {"type": "preference", "content": "", "importance": 3},
        {"type": "preference", "content": "x", "importance": 6},
        {"type": "preference", "content": "x", "importance": 0},
        {"type": "preference", "content": "x", "importance": "high"},
    ]
    for body in bad_bodies:
        response = await running.client.post(url, json=body, headers=auth(user_token))
        assert response.status_code == 422, body
    memory = await add(running, user_token, agent["id"], type="preference", content="x", importance=3)
    for body in [{"importance": 9}, {"status": "deleted"}, {"type": "x"}, {"content": ""}]:
        response = await running.client.patch(f"/api/memories/{memory['id']}", json=body, headers=auth(user_token))
        assert response.status_code == 422, body
    assert (await running.client.get(url, headers=auth(user_token))).json()["memories"] == [memory]
    bad_status = await running.client.get(f"{url}?status=gone", headers=auth(user_token))
    assert bad_status.status_code == 422


async def test_duplicate_active_content_is_409(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    first = await add(running, user_token, agent["id"], type="preference", content="喜欢猫", importance=3)
    response = await running.client.post(
        f"/api/agents/{agent['id']}/memories",
        json={"type": "boundary", "content": " 喜欢猫 ", "importance": 5},
        headers=auth(user_token),
    )
    assert response.status_code == 409
    # archived content no longer blocks a new active one
    await running.client.patch(f"/api/memories/{first['id']}", json={"status": "archived"}, headers=auth(user_token))
    await add(running, user_token, agent["id"], type="preference", content="喜欢猫", importance=3)
    # and re-activating the archived twin would duplicate it
    response = await running.client.patch(
        f"/api/memories/{first['id']}", json={"status": "active"}, headers=auth(user_token)
    )
    assert response.status_code == 409


async def test_memory_cap_per_agent(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    running.state.settings.limits.max_memories_per_agent = 2
    await add(running, user_token, agent["id"], type="preference", content="一", importance=3)
    await add(running, user_token, agent["id"], type="preference", content="二", importance=3)
    response = await running.client.post(
        f"/api/agents/{agent['id']}/memories",
        json={"type": "preference", "content": "三", "importance": 3},
        headers=auth(user_token),
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "too_many_memories"


async def test_the_memory_cap_holds_when_memories_are_added_at_once(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    running.state.settings.limits.max_memories_per_agent = 5
    responses = await asyncio.gather(
        *(
            running.client.post(
                f"/api/agents/{agent['id']}/memories",
                json={"type": "preference", "content": f"喜欢第{i}样东西", "importance": 3},
                headers=auth(user_token),
            )
            for i in range(20)
        )
    )
    assert sorted(r.status_code for r in responses) == [201] * 5 + [422] * 15
    listed = await running.client.get(f"/api/agents/{agent['id']}/memories?status=active", headers=auth(user_token))
    assert len(listed.json()["memories"]) == 5
