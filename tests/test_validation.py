"""Bad chat input: a clear 4xx JSON error, no 500, and nothing stored."""

from typing import Any

import pytest

from tests.conftest import Running, auth, chat_body
from tests.upstream import TestUpstream


async def assert_nothing_stored(running: Running, token: str, agent_id: str) -> None:
    history = (await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))).json()
    assert history["messages"] == []


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"messages": "nope"}, 422, "invalid_input"),
        ({"messages": [{"role": "robot", "parts": []}]}, 422, "invalid_input"),
        ({"messages": [{"role": "user", "parts": [{"type": "text", "text": 5}]}]}, 422, "invalid_input"),
        ({"messages": []}, 422, "no_user_message"),
        (
            {"messages": [{"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "hi"}]}]},
            422,
            "no_user_message",
        ),
        (
            {"messages": [{"id": "a", "role": "user", "parts": [{"type": "text", "text": " \x00\r\n "}]}]},
            422,
            "empty_message",
        ),
        ({"messages": [{"id": "a", "role": "user", "parts": [{"type": "step-start"}]}]}, 422, "empty_message"),
        ({"trigger": "send-it"}, 422, "invalid_input"),
    ],
)
async def test_bad_bodies(
    running: Running,
    user_token: str,
    agent: dict[str, Any],
    upstream: TestUpstream,
    body: dict[str, Any],
    status: int,
    code: str,
) -> None:
    response = await running.client.post("/api/chat", json={"agentId": agent["id"], **body}, headers=auth(user_token))
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert upstream.chat_requests == []
    await assert_nothing_stored(running, user_token, agent["id"])


async def test_malformed_json(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    response = await running.client.post(
        "/api/chat", content=b'{"agentId": ', headers={**auth(user_token), "Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "malformed_json"
    await assert_nothing_stored(running, user_token, agent["id"])


async def test_unknown_agent(running: Running, user_token: str, upstream: TestUpstream) -> None:
    response = await running.client.post("/api/chat", json=chat_body("missing", "hi"), headers=auth(user_token))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "agent_not_found"
    assert upstream.chat_requests == []


async def test_oversized_message(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    text = "长" * (running.state.settings.limits.max_message_chars + 1)
    response = await running.client.post("/api/chat", json=chat_body(agent["id"], text), headers=auth(user_token))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "message_too_long"
    await assert_nothing_stored(running, user_token, agent["id"])
    ok = "长" * running.state.settings.limits.max_message_chars
    response = await running.client.post("/api/chat", json=chat_body(agent["id"], ok), headers=auth(user_token))
    await running.settle()
    assert response.status_code == 200


async def test_oversized_body_and_too_many_messages(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    running.state.chat.limits.max_messages_per_request = 3
    body = chat_body(agent["id"], "hi")
    body["messages"] = body["messages"] * 4
    response = await running.client.post("/api/chat", json=body, headers=auth(user_token))
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "too_many_messages"
    huge = b'{"agentId": "' + b"x" * (running.state.settings.limits.max_request_bytes + 10) + b'"}'
    response = await running.client.post(
        "/api/chat", content=huge, headers={**auth(user_token), "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    await assert_nothing_stored(running, user_token, agent["id"])


async def test_chat_rate_limit(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    from memchat.limits.throttle import RateLimiter

    running.state.chat.limiter = RateLimiter(2)
    statuses = []
    for i in range(3):
        response = await running.client.post("/api/chat", json=chat_body(agent["id"], f"{i}"), headers=auth(user_token))
        statuses.append(response.status_code)
    await running.settle()
    assert statuses == [200, 200, 429]
    assert int(response.headers["retry-after"]) >= 1
    history = (await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(user_token))).json()
    assert len(history["messages"]) == 4


async def test_nul_characters_are_refused_not_stored(running: Running, user_token: str, agent: dict[str, Any]) -> None:
    response = await running.client.post(
        "/api/agents", json={"name": "a", "profile": {"lastActive": "x\u0000y"}}, headers=auth(user_token)
    )
    assert response.status_code == 422
    response = await running.client.get(f"/api/agents/{agent['id']}/messages?before=%00", headers=auth(user_token))
    assert response.status_code == 422
    body = chat_body(agent["id"], "hi", message_id="id\u0000")
    response = await running.client.post("/api/chat", json=body, headers=auth(user_token))
    assert response.status_code == 422
    await assert_nothing_stored(running, user_token, agent["id"])
    listed = (await running.client.get("/api/agents", headers=auth(user_token))).json()["agents"]
    assert [a["id"] for a in listed] == [agent["id"]]
