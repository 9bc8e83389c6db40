"""API keys: POST/GET/DELETE /api/keys, and a key wherever a bearer token works (REST, /api/chat)."""

import hashlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update

from memchat.models import ApiKey
from tests.conftest import Running, auth, chat, chat_body, create_agent, signup
from tests.serve import Server, free_port, redis_url, server_env
from tests.upstream import DEFAULT_REPLY, TestUpstream


async def new_key(client: httpx.AsyncClient, token: str, name: str = "script") -> dict[str, Any]:
    response = await client.post("/api/keys", json={"name": name}, headers=auth(token))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def stored_keys(running: Running) -> list[ApiKey]:
    async with running.db.read() as session:
        return list((await session.scalars(select(ApiKey).order_by(ApiKey.created_at_ms))).all())


async def test_a_key_is_shown_once_listed_by_prefix_and_works_until_deleted(running: Running) -> None:
    client = running.client
    token = await signup(client)
    first = await new_key(client, token, "  laptop  ")
    second = await new_key(client, token, "CI")

    assert set(first) == {"id", "name", "key", "prefix", "createdAtMs", "lastUsedAtMs"}
    assert first["name"] == "laptop"
    assert first["key"].startswith("mck_")
    assert len(first["key"]) == 4 + 43
    assert first["prefix"] == first["key"][:12]
    assert first["lastUsedAtMs"] is None
    assert first["key"] != second["key"]
    [row, _] = await stored_keys(running)
    assert row.key_hash == hashlib.sha256(first["key"].encode()).hexdigest()

    listed = (await client.get("/api/keys", headers=auth(token))).json()
    assert [k["id"] for k in listed["keys"]] == [second["id"], first["id"]]
    assert all("key" not in k for k in listed["keys"])
    assert first["key"] not in str(listed)

    me = await client.get("/api/me", headers=auth(first["key"]))
    assert me.status_code == 200
    assert me.json() == (await client.get("/api/me", headers=auth(token))).json()
    agent = await create_agent(client, first["key"])
    assert [a["id"] for a in (await client.get("/api/agents", headers=auth(token))).json()["agents"]] == [agent["id"]]

    assert (await client.delete(f"/api/keys/{first['id']}", headers=auth(token))).status_code == 204
    refused = await client.get("/api/agents", headers=auth(first["key"]))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_api_key"
    assert (await client.get("/api/agents", headers=auth(second["key"]))).status_code == 200
    assert [k["id"] for k in (await client.get("/api/keys", headers=auth(token))).json()["keys"]] == [second["id"]]
    again = await client.delete(f"/api/keys/{first['id']}", headers=auth(token))
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "api_key_not_found"


async def test_a_key_holds_a_chat_turn_and_a_revoked_key_cannot(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    key = await new_key(running.client, token)
    agent = await create_agent(running.client, token)

    response = await chat(running, key["key"], agent["id"], "你好")
    assert response.status_code == 200, response.text
    assert response.text == DEFAULT_REPLY
    history = (await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(token))).json()
    assert [m["parts"][0]["text"] for m in history["messages"]] == ["你好", DEFAULT_REPLY]

    await running.client.delete(f"/api/keys/{key['id']}", headers=auth(token))
    refused = await chat(running, key["key"], agent["id"], "还在吗")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_api_key"
    assert len(upstream.chat_requests) == 1
    history = (await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(token))).json()
    assert len(history["messages"]) == 2


async def test_another_users_key_is_not_found_and_not_listed(running: Running) -> None:
    client = running.client
    alice, bob = await signup(client), await signup(client)
    alices = await new_key(client, alice)
    alice_agent = await create_agent(client, alice)

    deleted = await client.delete(f"/api/keys/{alices['id']}", headers=auth(bob))
    assert deleted.status_code == 404
    assert deleted.json()["error"]["code"] == "api_key_not_found"
    assert (await client.get("/api/keys", headers=auth(bob))).json() == {"keys": []}
    assert (await client.get("/api/me", headers=auth(alices["key"]))).status_code == 200
    # the key is Alice: Bob's key does not reach her agent
    bobs = await new_key(client, bob)
    hidden = await client.get(f"/api/agents/{alice_agent['id']}", headers=auth(bobs["key"]))
    assert hidden.status_code == 404


@pytest.mark.parametrize(
    "body",
    [{}, {"name": ""}, {"name": "   "}, {"name": "x" * 101}, {"name": 7}, {"name": None}, {"name": "a\u0000b"}],
)
async def test_bad_input_is_422_and_creates_nothing(running: Running, body: dict[str, Any]) -> None:
    token = await signup(running.client)
    response = await running.client.post("/api/keys", json=body, headers=auth(token))
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"
    assert await stored_keys(running) == []


async def test_unknown_keys_and_missing_tokens_are_refused(running: Running) -> None:
    client = running.client
    assert (await client.get("/api/keys")).json()["error"]["code"] == "missing_token"
    assert (await client.post("/api/keys", json={"name": "x"})).status_code == 401
    made_up = await client.get("/api/me", headers=auth("mck_" + "A" * 43))
    assert made_up.status_code == 401
    assert made_up.json()["error"]["code"] == "invalid_api_key"
    assert await stored_keys(running) == []


async def test_a_key_cannot_create_keys(running: Running) -> None:
    token = await signup(running.client)
    key = await new_key(running.client, token)
    response = await running.client.post("/api/keys", json={"name": "more"}, headers=auth(key["key"]))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "login_required"
    assert len(await stored_keys(running)) == 1
    # listing and revoking are fine with the key itself
    assert (await running.client.get("/api/keys", headers=auth(key["key"]))).status_code == 200
    assert (await running.client.delete(f"/api/keys/{key['id']}", headers=auth(key["key"]))).status_code == 204
    assert await stored_keys(running) == []


async def test_a_key_cannot_delete_the_account_change_its_password_or_export_it(running: Running) -> None:
    client = running.client
    token = await signup(client, "owner@example.com", password="password-1")
    key = (await new_key(client, token))["key"]
    agent = await create_agent(client, key)

    for method, path, body in (
        ("DELETE", "/api/me", None),
        ("POST", "/api/me/password", {"currentPassword": "password-1", "newPassword": "password-2"}),
        ("GET", "/api/me/export", None),
    ):
        response = await client.request(method, path, json=body, headers=auth(key))
        assert response.status_code == 403, (path, response.text)
        assert response.json()["error"]["code"] == "login_required"

    # nothing changed: the account, its agent and its password are there, the key still reads data
    assert (await client.get(f"/api/agents/{agent['id']}", headers=auth(key))).status_code == 200
    login = await client.post("/api/auth/login", json={"email": "owner@example.com", "password": "password-1"})
    assert login.status_code == 200
    # a made-up key is still a 401, not a 403
    made_up = await client.delete("/api/me", headers=auth("mck_" + "A" * 43))
    assert made_up.status_code == 401
    # the login token does all three
    assert (await client.get("/api/me/export", headers=auth(token))).status_code == 200
    assert (await client.delete("/api/me", headers=auth(token))).status_code == 204


async def test_last_use_is_written_at_most_once_a_minute(running: Running) -> None:
    token = await signup(running.client)
    key = await new_key(running.client, token)
    await running.client.get("/api/me", headers=auth(key["key"]))
    await running.settle()
    [row] = await stored_keys(running)
    first_use = row.last_used_at_ms
    assert first_use is not None
    assert first_use >= key["createdAtMs"]

    for _ in range(3):
        await running.client.get("/api/me", headers=auth(key["key"]))
    await running.settle()
    [row] = await stored_keys(running)
    assert row.last_used_at_ms == first_use  # within the minute: not written again

    async with running.db.write() as session:
        await session.execute(update(ApiKey).values(last_used_at_ms=first_use - 61_000))
    await running.client.get("/api/me", headers=auth(key["key"]))
    await running.settle()
    [row] = await stored_keys(running)
    assert row.last_used_at_ms is not None
    assert row.last_used_at_ms >= first_use
    listed = (await running.client.get("/api/keys", headers=auth(token))).json()["keys"]
    assert listed[0]["lastUsedAtMs"] == row.last_used_at_ms


async def test_the_export_lists_keys_without_secrets_and_deleting_the_user_deletes_them(running: Running) -> None:
    client = running.client
    token, other = await signup(client), await signup(client)
    key = await new_key(client, token, "phone")
    others = await new_key(client, other)

    export = (await client.get("/api/me/export", headers=auth(token))).json()
    assert export["apiKeys"] == [{k: key[k] for k in ("id", "name", "prefix", "createdAtMs", "lastUsedAtMs")}]
    text = str(export)
    assert key["key"] not in text
    assert hashlib.sha256(key["key"].encode()).hexdigest() not in text

    assert (await client.delete("/api/me", headers=auth(token))).status_code == 204
    assert (await client.get("/api/me", headers=auth(key["key"]))).status_code == 401
    async with running.db.read() as session:
        owners = (await session.scalars(select(ApiKey.id))).all()
        assert owners == [others["id"]]
        assert await session.scalar(select(func.count()).select_from(ApiKey)) == 1


async def test_a_key_revoked_on_one_instance_is_refused_at_once_by_another(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    """Two real `memchat serve` processes on one PostgreSQL database, as behind a load balancer."""
    # several instances share Redis (memchat refuses a second one on the database without it)
    env = server_env(postgres_url, upstream, tmp_path, MEMCHAT_REDIS_URL=redis_url())
    a = Server(env, free_port(), tmp_path / "a.log")
    b = Server(env, free_port(), tmp_path / "b.log")
    try:
        await a.start()
        await b.start()
        async with httpx.AsyncClient(timeout=30, verify=False) as client:
            token = (
                await client.post(f"{a.url}/api/auth/signup", json={"email": "k@example.com", "password": "p" * 10})
            ).json()["token"]
            created = await client.post(f"{a.url}/api/keys", json={"name": "two"}, headers=auth(token))
            key = created.json()
            agent = (await client.post(f"{b.url}/api/agents", json={"name": "小林"}, headers=auth(key["key"]))).json()
            with_key = auth(key["key"])
            turn = await client.post(f"{b.url}/api/chat", json=chat_body(agent["id"], "你好"), headers=with_key)
            assert turn.status_code == 200
            assert turn.text == DEFAULT_REPLY

            assert (await client.delete(f"{a.url}/api/keys/{key['id']}", headers=auth(token))).status_code == 204
            for path in ("/api/agents", "/api/keys"):
                refused = await client.get(f"{b.url}{path}", headers=auth(key["key"]))
                assert refused.status_code == 401
                assert refused.json()["error"]["code"] == "invalid_api_key"
            turn = await client.post(f"{b.url}/api/chat", json=chat_body(agent["id"], "还在吗"), headers=with_key)
            assert turn.status_code == 401
            assert len(upstream.chat_requests) == 1
    finally:
        a.stop()
        b.stop()
