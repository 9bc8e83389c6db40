"""The account itself: POST /api/me/password, DELETE /api/me, GET /api/me/export."""

from typing import Any

import httpx
import jwt
from sqlalchemy import func, select, update

from memchat.clock import now_ms
from memchat.models import Agent, Conversation, Memory, MemoryEvent, Message, User
from tests.conftest import Running, auth, chat, create_agent, signup
from tests.upstream import DEFAULT_REPLY


async def _login(client: httpx.AsyncClient, email: str, password: str) -> int:
    response = await client.post("/api/auth/login", json={"email": email, "password": password})
    return response.status_code


async def _change(client: httpx.AsyncClient, token: str, current: str, new: str) -> httpx.Response:
    body = {"currentPassword": current, "newPassword": new}
    return await client.post("/api/me/password", json=body, headers=auth(token))


async def _account_with_data(running: Running, email: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A user with an agent, one chat turn (which the v1 rules make a memory of), and a memory of
    their own that they then edited."""
    token = await signup(running.client, email, password="password-1")
    agent = await create_agent(running.client, token, profile={"topic": "猫"})
    assert (await chat(running, token, agent["id"], "以后不要叫我宝贝")).status_code == 200
    created = await running.client.post(
        f"/api/agents/{agent['id']}/memories",
        json={"type": "preference", "content": "喜欢猫", "importance": 3},
        headers=auth(token),
    )
    assert created.status_code == 201, created.text
    memory: dict[str, Any] = created.json()
    edited = await running.client.patch(
        f"/api/memories/{memory['id']}", json={"content": "喜欢狗"}, headers=auth(token)
    )
    assert edited.status_code == 200, edited.text
    return token, agent, memory


async def _rows_of(running: Running, user_id: str) -> dict[str, int]:
    async with running.db.read() as session:
        return {
            model.__tablename__: await session.scalar(
                select(func.count()).select_from(model).where(model.user_id == user_id)  # type: ignore[attr-defined]
            )
            or 0
            for model in (Agent, Conversation, Message, Memory, MemoryEvent)
        }


async def test_password_change_needs_the_current_password(running: Running) -> None:
    token = await signup(running.client, "pw@example.com", password="password-1")

    wrong = await _change(running.client, token, "not-my-password", "password-2")
    assert wrong.status_code == 403  # not 401: the token is fine, and the console keeps its session
    assert wrong.json()["error"]["code"] == "wrong_password"
    assert await _login(running.client, "pw@example.com", "password-2") == 401

    for new in ["short", "x" * 1025, "bad\x00password"]:
        invalid = await _change(running.client, token, "password-1", new)
        assert invalid.status_code == 422, new
        assert invalid.json()["error"]["code"] == "invalid_input"
        assert "newPassword" in invalid.json()["error"]["message"]

    changed = await _change(running.client, token, "password-1", "password-2")
    assert changed.status_code == 200
    assert changed.json()["user"]["email"] == "pw@example.com"
    assert await _login(running.client, "pw@example.com", "password-2") == 200
    assert await _login(running.client, "pw@example.com", "password-1") == 401
    fresh = changed.json()["token"]
    assert (await running.client.get("/api/me", headers=auth(fresh))).status_code == 200
    assert (await running.client.post("/api/me/password", json={"newPassword": "password-3"})).status_code == 401


async def test_a_password_change_ends_every_earlier_token(running: Running) -> None:
    """The token that changed it and another device's are refused on every route, the chat turn
    too (which checks in its own transaction); the change's answer and a new login work."""
    token = await signup(running.client, "ends@example.com", password="password-1")
    agent = await create_agent(running.client, token)
    assert (await chat(running, token, agent["id"], "第一句")).status_code == 200
    other_device = (
        await running.client.post("/api/auth/login", json={"email": "ends@example.com", "password": "password-1"})
    ).json()["token"]

    changed = await _change(running.client, token, "password-1", "password-2")
    assert changed.status_code == 200
    for old in (token, other_device):
        for response in (
            await running.client.get("/api/me", headers=auth(old)),
            await running.client.get(f"/api/agents/{agent['id']}", headers=auth(old)),
            await chat(running, old, agent["id"], "旧令牌"),
        ):
            assert response.status_code == 401, response.request.url
            assert response.json()["error"]["code"] == "token_revoked"
    history = await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(changed.json()["token"]))
    assert [m["parts"][0]["text"] for m in history.json()["messages"] if m["role"] == "user"] == ["第一句"]

    relogin = await running.client.post("/api/auth/login", json={"email": "ends@example.com", "password": "password-2"})
    for fresh in (changed.json()["token"], relogin.json()["token"]):
        assert (await running.client.get("/api/me", headers=auth(fresh))).status_code == 200
        assert (await chat(running, fresh, agent["id"], "新令牌")).status_code == 200


async def test_a_token_from_before_millisecond_issue_times_is_judged_by_its_second(running: Running) -> None:
    """A token with only `iat` (seconds), as memchat issued them before `iat_ms`, counts from the
    start of its second: one from the second of the change is refused, one from the next is not."""
    token = await signup(running.client, "old@example.com", password="password-1")
    user_id = (await running.client.get("/api/me", headers=auth(token))).json()["id"]
    change_s = now_ms() // 1000 - 100
    async with running.db.write() as session:
        await session.execute(
            update(User).where(User.id == user_id).values(tokens_valid_after_ms=change_s * 1000 + 500)
        )
    secret = running.state.settings.auth.secret
    assert secret is not None

    def legacy(iat_s: int) -> str:
        return jwt.encode({"sub": user_id, "iat": iat_s, "exp": iat_s + 3600}, secret, algorithm="HS256")

    refused = await running.client.get("/api/me", headers=auth(legacy(change_s)))
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "token_revoked")
    assert (await running.client.get("/api/me", headers=auth(legacy(change_s + 1)))).status_code == 200


async def test_wrong_current_passwords_are_throttled_like_logins(running: Running) -> None:
    token = await signup(running.client, "guess@example.com", password="password-1")
    statuses = [(await _change(running.client, token, f"guess-{i}", "password-2")).status_code for i in range(7)]
    assert statuses[:5] == [403] * 5
    assert statuses[-1] == 429
    throttled = await _change(running.client, token, "password-1", "password-2")
    assert throttled.status_code == 429
    assert throttled.json()["error"]["code"] == "login_throttled"
    assert await _login(running.client, "guess@example.com", "password-1") == 429


async def test_deleting_the_account_deletes_everything_of_it_and_ends_its_tokens(running: Running) -> None:
    token, _agent, _memory = await _account_with_data(running, "leaving@example.com")
    other_token, other_agent, _ = await _account_with_data(running, "staying@example.com")
    user_id = (await running.client.get("/api/me", headers=auth(token))).json()["id"]
    other_id = (await running.client.get("/api/me", headers=auth(other_token))).json()["id"]
    before = await _rows_of(running, user_id)
    assert all(count > 0 for count in before.values()), before

    response = await running.client.delete("/api/me", headers=auth(token))
    assert response.status_code == 204

    assert await _rows_of(running, user_id) == dict.fromkeys(before, 0)
    async with running.db.read() as session:
        assert await session.get(User, user_id) is None
    for path in ["/api/me", "/api/agents", "/api/me/export"]:
        refused = await running.client.get(path, headers=auth(token))
        assert refused.status_code == 401, path
        assert refused.json()["error"]["code"] == "invalid_token"
    assert (await running.client.delete("/api/me", headers=auth(token))).status_code == 401
    assert await _login(running.client, "leaving@example.com", "password-1") == 401

    # the other account is untouched, and the email is free again
    assert await _rows_of(running, other_id) == before
    agents = (await running.client.get("/api/agents", headers=auth(other_token))).json()["agents"]
    assert [a["id"] for a in agents] == [other_agent["id"]]
    await signup(running.client, "leaving@example.com", password="password-9")


async def test_export_holds_everything_of_the_account_and_nothing_else(running: Running) -> None:
    token, agent, memory = await _account_with_data(running, "export@example.com")
    await _account_with_data(running, "someone-else@example.com")
    me = (await running.client.get("/api/me", headers=auth(token))).json()

    response = await running.client.get("/api/me/export", headers=auth(token))
    assert response.status_code == 200
    export = response.json()
    assert set(export) == {"exportedAtMs", "user", "agents", "conversations", "messages", "memories", "apiKeys"}
    assert export["user"] == me
    assert "password" not in response.text.lower()

    [exported_agent] = export["agents"]
    assert exported_agent["id"] == agent["id"]
    assert exported_agent["name"] == agent["name"]
    assert exported_agent["profile"] == agent["profile"]
    assert exported_agent["profile"]["topic"] == "猫"

    [conversation] = export["conversations"]
    assert conversation["agentId"] == agent["id"]
    assert conversation["messageCount"] == 2
    assert [(m["role"], m["content"], m["conversationId"]) for m in export["messages"]] == [
        ("user", "以后不要叫我宝贝", conversation["id"]),
        ("assistant", DEFAULT_REPLY, conversation["id"]),
    ]

    by_content = {m["content"]: m for m in export["memories"]}
    assert set(by_content) == {"以后不要叫我宝贝", "喜欢狗"}
    extracted = by_content["以后不要叫我宝贝"]
    assert extracted["sourceMessageId"] == export["messages"][0]["id"]
    assert [(e["kind"], e["actor"]) for e in extracted["events"]] == [("extracted", "rules")]
    mine = by_content["喜欢狗"]
    assert mine["id"] == memory["id"]
    assert [e["kind"] for e in mine["events"]] == ["created", "edited"]
    assert mine["events"][0]["before"] is None
    assert mine["events"][1]["before"]["content"] == "喜欢猫"
    assert mine["events"][1]["after"]["content"] == "喜欢狗"


async def test_export_of_a_new_account_is_empty(running: Running) -> None:
    token = await signup(running.client)
    export = (await running.client.get("/api/me/export", headers=auth(token))).json()
    assert (export["agents"], export["conversations"], export["messages"], export["memories"]) == ([], [], [], [])
    assert (await running.client.get("/api/me/export")).status_code == 401
