"""Memory history: an event row for every change, GET .../history and POST .../revert."""

from typing import Any

from tests.conftest import Running, auth, chat, create_agent, signup
from tests.memories.support import history, memories


async def _create(running: Running, token: str, agent_id: str, content: str, **fields: Any) -> dict[str, Any]:
    body = {"type": "preference", "content": content, "importance": 3, **fields}
    response = await running.client.post(f"/api/agents/{agent_id}/memories", json=body, headers=auth(token))
    assert response.status_code == 201, response.text
    memory: dict[str, Any] = response.json()
    return memory


async def _patch(running: Running, token: str, memory_id: str, **fields: Any) -> dict[str, Any]:
    response = await running.client.patch(f"/api/memories/{memory_id}", json=fields, headers=auth(token))
    assert response.status_code == 200, response.text
    memory: dict[str, Any] = response.json()
    return memory


async def test_rule_extraction_records_an_extracted_event(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    await chat(running, user_token, agent["id"], "以后不要叫我宝贝")
    [memory] = await memories(running, user_token, agent["id"])
    [event] = await history(running, user_token, memory["id"])
    assert event["kind"] == "extracted"
    assert event["actor"] == "rules"
    assert event["before"] is None
    assert event["after"] == {"type": "boundary", "content": "以后不要叫我宝贝", "importance": 5, "status": "active"}
    assert event["sourceMessageId"] == memory["sourceMessageId"] is not None
    assert event["memoryId"] == memory["id"]


async def test_a_restore_from_the_archive_is_its_own_event_and_keeps_updated_at(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    memory = await _create(running, user_token, agent["id"], "我喜欢爬山")
    archived = await _patch(running, user_token, memory["id"], status="archived")
    restored = await _patch(running, user_token, memory["id"], status="active")  # a restore, or 撤销 of the archive
    # Archiving and restoring say nothing new: 更新于 stays when the memory was last changed.
    assert archived["updatedAtMs"] == restored["updatedAtMs"] == memory["updatedAtMs"]
    events = await history(running, user_token, memory["id"])
    assert [e["kind"] for e in events] == ["created", "archived", "unarchived"]
    assert (events[2]["before"]["status"], events[2]["after"]["status"]) == ("archived", "active")
    # A change of what it says is an edit, and moves 更新于.
    edited = await _patch(running, user_token, memory["id"], status="archived", content="我喜欢徒步")
    assert edited["updatedAtMs"] > memory["updatedAtMs"]
    assert (await history(running, user_token, memory["id"]))[-1]["kind"] == "edited"


async def test_user_changes_are_events_and_revert_restores_before(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    memory = await _create(running, user_token, agent["id"], "我喜欢猫")
    await _patch(running, user_token, memory["id"], content="我喜欢狗", importance=4)
    await _patch(running, user_token, memory["id"], status="archived")
    await _patch(running, user_token, memory["id"], importance=4)  # no change: no event
    events = await history(running, user_token, memory["id"])
    assert [(e["kind"], e["actor"]) for e in events] == [("created", "user"), ("edited", "user"), ("archived", "user")]
    assert events[1]["before"]["content"] == "我喜欢猫"
    assert events[1]["after"] == {"type": "preference", "content": "我喜欢狗", "importance": 4, "status": "active"}
    assert events[2]["after"]["status"] == "archived"

    response = await running.client.post(
        f"/api/memories/{memory['id']}/revert", json={"eventId": events[1]["id"]}, headers=auth(user_token)
    )
    assert response.status_code == 200, response.text
    reverted = response.json()
    assert (reverted["content"], reverted["importance"], reverted["status"]) == ("我喜欢猫", 3, "active")
    events = await history(running, user_token, memory["id"])
    assert events[-1]["kind"] == "reverted"
    assert events[-1]["actor"] == "user"
    assert events[-1]["before"]["content"] == "我喜欢狗"
    assert events[-1]["before"]["status"] == "archived"
    assert events[-1]["after"] == {"type": "preference", "content": "我喜欢猫", "importance": 3, "status": "active"}

    # reverting the event that created it: the memory did not exist before, so it is archived
    response = await running.client.post(
        f"/api/memories/{memory['id']}/revert", json={"eventId": events[0]["id"]}, headers=auth(user_token)
    )
    assert response.status_code == 200
    assert response.json()["status"] == "archived"
    assert await memories(running, user_token, agent["id"]) == []


async def test_revert_that_would_duplicate_an_active_memory_is_409(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    first = await _create(running, user_token, agent["id"], "我喜欢猫")
    await _patch(running, user_token, first["id"], content="我喜欢狗")
    await _create(running, user_token, agent["id"], "我喜欢猫")
    edited = (await history(running, user_token, first["id"]))[1]
    response = await running.client.post(
        f"/api/memories/{first['id']}/revert", json={"eventId": edited["id"]}, headers=auth(user_token)
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "duplicate_memory"
    assert [e["kind"] for e in await history(running, user_token, first["id"])] == ["created", "edited"]
    contents = sorted(m["content"] for m in await memories(running, user_token, agent["id"]))
    assert contents == sorted(["我喜欢猫", "我喜欢狗"])


async def test_history_and_revert_are_scoped_to_the_user(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    mine = await _create(running, user_token, agent["id"], "我喜欢猫")
    other_token = await signup(running.client)
    other_agent = await create_agent(running.client, other_token)
    theirs = await _create(running, other_token, other_agent["id"], "我喜欢狗")
    their_event = (await history(running, other_token, theirs["id"]))[0]
    my_event = (await history(running, user_token, mine["id"]))[0]

    assert (
        await running.client.get(f"/api/memories/{theirs['id']}/history", headers=auth(user_token))
    ).status_code == 404
    for memory_id, event_id in ((theirs["id"], their_event["id"]), (mine["id"], their_event["id"])):
        response = await running.client.post(
            f"/api/memories/{memory_id}/revert", json={"eventId": event_id}, headers=auth(user_token)
        )
        assert response.status_code == 404, response.text
    response = await running.client.post(
        f"/api/memories/{mine['id']}/revert", json={"eventId": "no-such-event"}, headers=auth(user_token)
    )
    assert response.json()["error"]["code"] == "memory_event_not_found"
    assert (await history(running, user_token, mine["id"])) == [my_event]


async def test_deleting_a_memory_deletes_its_history(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    memory = await _create(running, user_token, agent["id"], "我喜欢猫")
    assert (await running.client.delete(f"/api/memories/{memory['id']}", headers=auth(user_token))).status_code == 204
    response = await running.client.get(f"/api/memories/{memory['id']}/history", headers=auth(user_token))
    assert response.status_code == 404
