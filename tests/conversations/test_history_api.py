from typing import Any

from sqlalchemy import update

from memchat.models import Message
from tests.conftest import Running, auth, chat, chat_body
from tests.upstream import Reply, TestUpstream


async def page(running: Running, token: str, agent_id: str, query: str = "") -> dict[str, Any]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages{query}", headers=auth(token))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_empty_history(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    assert await page(running, user_token, agent["id"]) == {"messages": [], "hasMore": False}


async def test_pages_newest_first_each_oldest_first(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    for i in range(5):
        await chat(running, user_token, agent["id"], f"第{i}句")
    latest = await page(running, user_token, agent["id"], "?limit=4")
    assert [m["parts"][0]["text"] for m in latest["messages"] if m["role"] == "user"] == ["第3句", "第4句"]
    assert latest["hasMore"] is True
    assert latest["messages"][0]["parts"] == [{"type": "text", "text": "第3句"}]
    earlier = await page(running, user_token, agent["id"], f"?limit=4&before={latest['messages'][0]['id']}")
    assert [m["parts"][0]["text"] for m in earlier["messages"] if m["role"] == "user"] == ["第1句", "第2句"]
    assert earlier["hasMore"] is True
    first = await page(running, user_token, agent["id"], f"?limit=4&before={earlier['messages'][0]['id']}")
    assert [m["parts"][0]["text"] for m in first["messages"]][0] == "第0句"
    assert len(first["messages"]) == 2
    assert first["hasMore"] is False
    everything = await page(running, user_token, agent["id"])
    assert [m["id"] for m in everything["messages"]] == [
        m["id"] for m in first["messages"] + earlier["messages"] + latest["messages"]
    ]
    times = [m["createdAtMs"] for m in everything["messages"]]
    assert times == sorted(times)


async def test_limit_bounds_and_unknown_before(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    for query in ("?limit=0", "?limit=201", "?limit=x"):
        response = await running.client.get(f"/api/agents/{agent['id']}/messages{query}", headers=auth(user_token))
        assert response.status_code == 422, query
    response = await running.client.get(f"/api/agents/{agent['id']}/messages?before=nope", headers=auth(user_token))
    assert response.status_code == 404
    assert (await page(running, user_token, agent["id"], "?limit=200"))["messages"] == []


async def test_a_reply_says_whether_its_memory_extraction_is_done(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    await chat(running, user_token, agent["id"], "我喜欢猫")
    user, reply = (await page(running, user_token, agent["id"]))["messages"]
    assert (user["role"], user["extractionState"]) == ("user", None)
    assert (reply["role"], reply["extractionState"]) == ("assistant", "done")
    async with running.db.write() as session:  # as while the background job has not run yet
        await session.execute(update(Message).where(Message.id == reply["id"]).values(extraction_state="pending"))
    _, reply = (await page(running, user_token, agent["id"]))["messages"]
    assert reply["extractionState"] == "pending"
    headers = auth(user_token)
    conversation = (await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=headers)).json()
    response = await running.client.get(f"/api/conversations/{conversation['id']}/messages", headers=headers)
    assert [m["extractionState"] for m in response.json()["messages"]] == [None, "pending"]


async def test_a_users_message_says_where_its_turn_stands(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    """pending while the reply is answered (another tab follows it then), done, failed, interrupted."""
    upstream.script(Reply(deltas=["第一", "第二"], hold_after=1))
    body = chat_body(agent["id"], "在吗", message_id="m-pending")
    async with running.client.stream("POST", "/api/chat", json=body, headers=auth(user_token)) as response:
        assert response.status_code == 200
        parts = aiter(response.aiter_text())
        assert await anext(parts) == "第一"  # the first part is here: the turn is being answered
        [user] = (await page(running, user_token, agent["id"]))["messages"]
        assert (user["role"], user["replyState"]) == ("user", "pending")
        upstream.release()
        assert "".join([text async for text in parts]) == "第二"
    await running.settle()
    user, reply = (await page(running, user_token, agent["id"]))["messages"]
    assert (user["replyState"], reply["replyState"]) == ("done", None)

    upstream.script(Reply(status=400))
    failed = await running.client.post("/api/chat", json=chat_body(agent["id"], "再来"), headers=auth(user_token))
    assert failed.status_code == 502
    assert (await page(running, user_token, agent["id"]))["messages"][-1]["replyState"] == "failed"

    # a turn left pending by an instance that stopped (its lease ran out): interrupted, not followed
    async with running.db.write() as session:
        await session.execute(
            update(Message).where(Message.id == user["id"]).values(reply_state="pending", turn_lease_until_ms=1)
        )
    assert (await page(running, user_token, agent["id"]))["messages"][0]["replyState"] == "interrupted"
