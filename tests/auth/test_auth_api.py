import time

import jwt
from sqlalchemy import delete

from memchat.models import User
from tests.conftest import Running, auth, signup

SECRET = "test-secret-for-memchat-tests-0123456789"


async def test_signup_login_me(running: Running) -> None:
    response = await running.client.post(
        "/api/auth/signup", json={"email": "Ann@Example.com", "password": "password-1", "displayName": "安"}
    )
    assert response.status_code == 201
    body = response.json()
    assert body["user"]["email"] == "ann@example.com"
    assert body["user"]["displayName"] == "安"
    assert "passwordHash" not in body["user"]
    claims = jwt.decode(body["token"], SECRET, algorithms=["HS256"])
    assert claims["sub"] == body["user"]["id"]
    assert claims["exp"] > time.time()

    login = await running.client.post("/api/auth/login", json={"email": "ann@example.com", "password": "password-1"})
    assert login.status_code == 200
    me = await running.client.get("/api/me", headers=auth(login.json()["token"]))
    assert me.json()["id"] == body["user"]["id"]


async def test_duplicate_email_is_409(running: Running) -> None:
    await signup(running.client, "dup@example.com", password="password-1")
    response = await running.client.post(
        "/api/auth/signup", json={"email": "DUP@example.com", "password": "password-2"}
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "email_taken"


async def test_signup_tells_only_that_an_email_is_taken(running: Running) -> None:
    """What the README says sign-up reveals: that the email is registered, nothing else, and the
    account is untouched."""
    await signup(running.client, "taken@example.com", password="password-1")
    response = await running.client.post(
        "/api/auth/signup", json={"email": "taken@example.com", "password": "password-2", "displayName": "X"}
    )
    assert response.json() == {"error": {"code": "email_taken", "message": "an account with this email already exists"}}
    login = {"email": "taken@example.com"}
    assert (await running.client.post("/api/auth/login", json={**login, "password": "password-1"})).status_code == 200
    assert (await running.client.post("/api/auth/login", json={**login, "password": "password-2"})).status_code == 401


async def test_login_does_not_tell_unknown_email_from_wrong_password(running: Running) -> None:
    await signup(running.client, "known@example.com")
    wrong = await running.client.post("/api/auth/login", json={"email": "known@example.com", "password": "nope-nope"})
    unknown = await running.client.post("/api/auth/login", json={"email": "ghost@example.com", "password": "nope-nope"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()


async def test_repeated_failures_are_throttled(running: Running) -> None:
    await signup(running.client, "target@example.com", password="right-password")
    statuses = []
    for _ in range(7):
        response = await running.client.post(
            "/api/auth/login", json={"email": "target@example.com", "password": "wrong-password"}
        )
        statuses.append(response.status_code)
    assert statuses[:5] == [401] * 5
    assert statuses[-1] == 429
    assert int(response.headers["retry-after"]) >= 1
    # even the right password waits until the lock expires
    right = await running.client.post(
        "/api/auth/login", json={"email": "target@example.com", "password": "right-password"}
    )
    assert right.status_code == 429


async def test_bad_tokens_are_refused(running: Running) -> None:
    token = await signup(running.client)
    user_id = jwt.decode(token, SECRET, algorithms=["HS256"])["sub"]
    now = int(time.time())
    bad = {
        "missing": None,
        "garbage": "not-a-jwt",
        "wrong signature": jwt.encode(
            {"sub": user_id, "exp": now + 60}, "another-secret-of-32-bytes-or-more!", "HS256"
        ),
        "expired": jwt.encode({"sub": user_id, "exp": now - 10}, SECRET, "HS256"),
        "no exp": jwt.encode({"sub": user_id}, SECRET, "HS256"),
        "alg none": jwt.encode({"sub": user_id, "exp": now + 60}, None, algorithm="none"),
        "unknown user": jwt.encode({"sub": "00000000-0000-0000-0000-000000000000", "exp": now + 60}, SECRET, "HS256"),
    }
    for name, bad_token in bad.items():
        headers = auth(bad_token) if bad_token else {}
        response = await running.client.get("/api/agents", headers=headers)
        assert response.status_code == 401, name
        assert set(response.json()["error"]) == {"code", "message"}, name
    assert (await running.client.get("/api/agents", headers=auth(token))).status_code == 200


async def test_token_of_a_deleted_user_is_refused(running: Running) -> None:
    token = await signup(running.client)
    user_id = jwt.decode(token, SECRET, algorithms=["HS256"])["sub"]
    async with running.db.write() as session:
        await session.execute(delete(User).where(User.id == user_id))
    assert (await running.client.get("/api/me", headers=auth(token))).status_code == 401


async def test_signup_validation(running: Running) -> None:
    for body in [{"email": "x", "password": "password-1"}, {"email": "a@b.c", "password": "short"}, {"email": "a@b.c"}]:
        response = await running.client.post("/api/auth/signup", json=body)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid_input"
