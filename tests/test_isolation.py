"""Two users: every route answers 404 for the other's agent, conversation, messages and memories."""

from tests.conftest import Running, auth, chat, create_agent, signup


async def test_users_cannot_see_each_other(running: Running) -> None:
    alice = await signup(running.client, "alice@example.com")
    bob = await signup(running.client, "bob@example.com")
    agent = await create_agent(running.client, alice, name="A的")
    await chat(running, alice, agent["id"], "我喜欢看电影")
    memories = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(alice))).json()
    [memory] = memories["memories"]
    conversation = (await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(alice))).json()

    assert (await running.client.get("/api/agents", headers=auth(bob))).json() == {"agents": []}
    attempts = [
        ("GET", f"/api/agents/{agent['id']}", None),
        ("PATCH", f"/api/agents/{agent['id']}", {"name": "抢"}),
        ("DELETE", f"/api/agents/{agent['id']}", None),
        ("GET", f"/api/agents/{agent['id']}/conversation", None),
        ("GET", f"/api/agents/{agent['id']}/messages", None),
        ("GET", f"/api/agents/{agent['id']}/conversations", None),
        ("POST", f"/api/agents/{agent['id']}/conversations", {}),
        ("GET", f"/api/conversations/{conversation['id']}", None),
        ("GET", f"/api/conversations/{conversation['id']}/messages", None),
        ("PATCH", f"/api/conversations/{conversation['id']}", {"title": "抢"}),
        ("DELETE", f"/api/conversations/{conversation['id']}", None),
        ("GET", f"/api/agents/{agent['id']}/memories", None),
        ("POST", f"/api/agents/{agent['id']}/memories", {"type": "preference", "content": "x", "importance": 3}),
        ("PATCH", f"/api/memories/{memory['id']}", {"content": "改"}),
        ("DELETE", f"/api/memories/{memory['id']}", None),
        (
            "POST",
            "/api/chat",
            {
                "agentId": agent["id"],
                "messages": [{"id": "x", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            },
        ),
    ]
    for method, url, body in attempts:
        response = await running.client.request(method, url, json=body, headers=auth(bob))
        assert response.status_code == 404, (method, url, response.text)
    bob_agent = await create_agent(running.client, bob)
    response = await chat(running, bob, bob_agent["id"], "hi", conversationId=conversation["id"])
    assert response.status_code == 404

    # Alice's data is untouched.
    again = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(alice))).json()
    assert again["memories"] == [memory]
    history = (await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(alice))).json()
    assert len(history["messages"]) == 2
    assert (await running.client.get(f"/api/agents/{agent['id']}", headers=auth(alice))).json()["name"] == "A的"
