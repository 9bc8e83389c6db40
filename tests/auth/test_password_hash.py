"""The argon2 cost of a password hash (MEMCHAT_PASSWORD_HASH_*): argon2-cffi's defaults unless set,
and a hash made at one cost still verifies after the setting changes. The rest of the suite hashes at
the cheapest cost (tests/conftest.py)."""

from pathlib import Path

import pytest
from argon2 import PasswordHasher, extract_parameters
from argon2.profiles import RFC_9106_LOW_MEMORY
from pydantic import ValidationError

from memchat.auth.repository import get_user_by_email
from memchat.security import Passwords
from memchat.settings import PasswordHashSettings, Settings
from tests.conftest import Running, make_settings, serve_app, signup
from tests.upstream import TestUpstream

COST_VARIABLES = (
    "MEMCHAT_PASSWORD_HASH_TIME_COST",
    "MEMCHAT_PASSWORD_HASH_MEMORY_KIB",
    "MEMCHAT_PASSWORD_HASH_PARALLELISM",
)
DEFAULT_COST = {"password_hash_time_cost": 3, "password_hash_memory_kib": 65536, "password_hash_parallelism": 4}


async def stored_time_cost(running: Running, email: str) -> int:
    async with running.db.read() as session:
        user = await get_user_by_email(session, email)
    assert user is not None
    return extract_parameters(user.password_hash).time_cost


@pytest.fixture
def unset_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in COST_VARIABLES:
        monkeypatch.delenv(name, raising=False)


async def test_the_default_cost_is_argon2_cffis(unset_cost: None) -> None:
    cost = Settings(_env_file=None).password_hash  # type: ignore[call-arg]
    made = extract_parameters(await Passwords(cost).hash("password-1"))
    assert made == extract_parameters(PasswordHasher().hash("password-1")) == RFC_9106_LOW_MEMORY
    assert (made.time_cost, made.memory_cost, made.parallelism) == (3, 65536, 4)


async def test_the_cost_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in zip(COST_VARIABLES, ("2", "64", "2"), strict=True):
        monkeypatch.setenv(name, value)
    made = extract_parameters(await Passwords(Settings(_env_file=None).password_hash).hash("password-1"))  # type: ignore[call-arg]
    assert (made.time_cost, made.memory_cost, made.parallelism) == (2, 64, 2)


async def test_a_hash_made_at_one_cost_verifies_at_another(unset_cost: None) -> None:
    default = Passwords(PasswordHashSettings(_env_file=None))  # type: ignore[call-arg]
    cheap = Passwords(PasswordHashSettings(_env_file=None, time_cost=1, memory_kib=8, parallelism=1))  # type: ignore[call-arg]
    for made_by, checked_by in ((cheap, default), (default, cheap)):
        stored = await made_by.hash("password-1")
        assert await checked_by.verify(stored, "password-1")
        assert not await checked_by.verify(stored, "password-2")
    assert not await default.verify(None, "password-1")  # an unknown email


def test_the_memory_must_hold_every_lane() -> None:
    with pytest.raises(ValidationError, match="at least 8 KiB per lane"):
        PasswordHashSettings(_env_file=None, memory_kib=16, parallelism=4)  # type: ignore[call-arg]


async def test_a_user_signed_up_at_the_cheap_cost_logs_in_after_the_default_comes_back(
    sqlite_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    settings = make_settings(sqlite_url, upstream, tmp_path)
    async with serve_app(settings) as cheap:
        await signup(cheap.client, "cost@example.com", password="password-1")
        assert await stored_time_cost(cheap, "cost@example.com") == 1
    async with serve_app(settings, **DEFAULT_COST) as default:
        login = {"email": "cost@example.com", "password": "password-1"}
        assert (await default.client.post("/api/auth/login", json=login)).status_code == 200
        wrong = {**login, "password": "password-2"}
        assert (await default.client.post("/api/auth/login", json=wrong)).status_code == 401
        # a password changed now is hashed at the default cost, and logs in at the cheap one
        token = await signup(default.client, "again@example.com", password="password-1")
        changed = await default.client.post(
            "/api/me/password",
            json={"currentPassword": "password-1", "newPassword": "password-2"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert changed.status_code == 200, changed.text
        assert await stored_time_cost(default, "again@example.com") == 3
    async with serve_app(settings) as cheap:
        login = {"email": "again@example.com", "password": "password-2"}
        assert (await cheap.client.post("/api/auth/login", json=login)).status_code == 200
