"""The CLI and the migrations: refuse an un-migrated DB, migrate, users and tokens from the shell."""

import asyncio
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from memchat.app import create_app
from memchat.auth.repository import get_user_by_email
from memchat.db.engine import create_database
from memchat.db.migrate import current_revision, head_revision
from memchat.models import Agent, Conversation, Memory, Message
from memchat.settings import Settings
from tests.conftest import Running, auth, chat, create_agent, start_server
from tests.upstream import TestUpstream

JWT = re.compile(r"[\w-]+\.[\w-]+\.[\w-]+")
SECRET = "test-secret-for-memchat-tests-0123456789"  # the `settings` fixture's


def run_cli(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memchat", *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


async def cli_async(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """run_cli beside a server on this event loop, which keeps serving meanwhile."""
    return await asyncio.to_thread(run_cli, *args, env=env, stdin=stdin)


@pytest.fixture
def fresh_sqlite(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MEMCHAT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'fresh.sqlite3'}",
        "MEMCHAT_DATA_DIR": str(tmp_path / "data"),
        "MEMCHAT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
    }


async def test_app_refuses_an_unmigrated_database(fresh_sqlite: dict[str, str], tmp_path: Path) -> None:
    settings = Settings(_env_file=None, database_url=fresh_sqlite["MEMCHAT_DATABASE_URL"], data_dir=tmp_path)  # type: ignore[call-arg]
    app = create_app(settings)
    with pytest.raises(RuntimeError, match="memchat migrate"):
        async with app.router.lifespan_context(app):
            pass


async def test_migrate_user_create_and_token(fresh_sqlite: dict[str, str], tmp_path: Path) -> None:
    migrated = run_cli("migrate", env=fresh_sqlite)
    assert migrated.returncode == 0, migrated.stderr
    db = create_database(Settings(_env_file=None, database_url=fresh_sqlite["MEMCHAT_DATABASE_URL"]).database)  # type: ignore[call-arg]
    assert await current_revision(db.engine) == head_revision()
    await db.dispose()
    assert run_cli("migrate", env=fresh_sqlite).returncode == 0  # idempotent

    created = run_cli("user", "create", "cli@example.com", "--password", "cli-password-1", env=fresh_sqlite)
    assert created.returncode == 0, created.stderr
    token = run_cli("token", "cli@example.com", env=fresh_sqlite)
    assert token.returncode == 0, token.stderr
    missing = run_cli("token", "nobody@example.com", env=fresh_sqlite)
    assert missing.returncode != 0

    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        database_url=fresh_sqlite["MEMCHAT_DATABASE_URL"],
        data_dir=Path(fresh_sqlite["MEMCHAT_DATA_DIR"]),
        llm_base_url="http://127.0.0.1:9/v1",
        web_dist_dir=tmp_path / "not-built",
    )
    server, task, base_url = await start_server(create_app(settings))
    try:
        async with httpx.AsyncClient(base_url=base_url, verify=False) as client:
            me = await client.get("/api/me", headers=auth(token.stdout.strip()))
            assert me.status_code == 200
            assert me.json()["email"] == "cli@example.com"
            # the JWT secret was generated once and kept in the data folder
            assert (Path(fresh_sqlite["MEMCHAT_DATA_DIR"]) / "jwt_secret").is_file()
            health = await client.get("/healthz")
            assert health.json() == {"status": "ok", "database": "ok", "llm": "remote", "images": False}
            root = await client.get("/")
            assert "npm run build" in root.text
    finally:
        server.should_exit = True
        await task


def test_openapi_command_prints_the_schema(fresh_sqlite: dict[str, str]) -> None:
    result = run_cli("openapi", env=fresh_sqlite)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert '"/api/chat"' in result.stdout
    assert '"MessagePage"' in result.stdout


async def test_console_is_served_with_spa_fallback(running_console: tuple[str, Path]) -> None:
    base_url, dist = running_console
    async with httpx.AsyncClient(base_url=base_url, verify=False) as client:
        assert (await client.get("/")).text == "<html>console</html>"
        assert (await client.get("/agents/123/chat")).text == "<html>console</html>"
        asset = await client.get("/assets/app.js")
        assert asset.text == "console.log(1)"
        assert "javascript" in asset.headers["content-type"]
        assert (await client.get("/../pyproject.toml")).text == "<html>console</html>"
        api = await client.get("/api/unknown")
        assert api.status_code == 404
        assert api.json()["error"]["code"] == "not_found"
        assert (await client.get("/healthz")).status_code == 200


@pytest.fixture
async def running_console(tmp_path: Path, fresh_sqlite: dict[str, str]) -> AsyncIterator[tuple[str, Path]]:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<html>console</html>")
    (dist / "assets" / "app.js").write_text("console.log(1)")
    assert run_cli("migrate", env=fresh_sqlite).returncode == 0
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        database_url=fresh_sqlite["MEMCHAT_DATABASE_URL"],
        data_dir=tmp_path / "data",
        llm_base_url="http://127.0.0.1:9/v1",
        web_dist_dir=dist,
    )
    server, task, base_url = await start_server(create_app(settings))
    yield base_url, dist
    server.should_exit = True
    await task


@pytest.fixture
def cli_env(database_url: str, upstream: TestUpstream, tmp_path: Path) -> dict[str, str]:
    """The CLI on the test's database (SQLite or PostgreSQL), with the tokens of the `running` app."""
    return {
        **os.environ,
        "MEMCHAT_DATABASE_URL": database_url,
        "MEMCHAT_DATA_DIR": str(tmp_path / "data"),
        "MEMCHAT_JWT_SECRET": SECRET,
        "MEMCHAT_LLM_BASE_URL": upstream.base_url,
    }


def assert_fails(result: subprocess.CompletedProcess[str], message: str) -> None:
    """One line on stderr, nothing on stdout, exit code 1: no traceback, no usage text."""
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr == f"error: {message}\n"


def test_output_is_only_what_the_command_is_for(fresh_sqlite: dict[str, str]) -> None:
    migrated = run_cli("migrate", env=fresh_sqlite)
    assert migrated.returncode == 0, migrated.stderr
    head = head_revision()
    assert migrated.stdout == f"migrated the empty database to revision {head}\n"
    assert migrated.stderr == ""  # alembic's INFO lines are gone
    again = run_cli("migrate", env=fresh_sqlite)
    assert (again.stdout, again.stderr) == (f"the database is up to date (revision {head})\n", "")

    assert run_cli("user", "create", "out@example.com", "--password", "password-1", env=fresh_sqlite).stderr == ""
    token = run_cli("token", "out@example.com", env=fresh_sqlite)
    assert token.returncode == 0
    assert token.stderr == ""
    assert JWT.fullmatch(token.stdout.removesuffix("\n"))

    verbose = run_cli("--verbose", "token", "out@example.com", env=fresh_sqlite)
    assert verbose.returncode == 0
    assert "INFO alembic" in verbose.stderr
    assert JWT.fullmatch(verbose.stdout.removesuffix("\n"))

    assert_fails(run_cli("token", "nobody@example.com", env=fresh_sqlite), "no user nobody@example.com")


def test_commands_refuse_an_unmigrated_database_in_one_line(fresh_sqlite: dict[str, str]) -> None:
    for args in [
        ("token", "a@example.com"),
        ("user", "list"),
        ("user", "create", "a@example.com", "--password", "p-12345678"),
    ]:
        assert_fails(run_cli(*args, env=fresh_sqlite), "the database is not migrated: run `memchat migrate` first")


def test_user_create_checks_what_sign_up_checks(cli_env: dict[str, str]) -> None:
    cases = {
        ("not-an-email", "password-1"): "email: is not an email address",
        ("a@example.com", "short"): "password: String should have at least 8 characters",
        ("a@example.com", "x" * 1025): "password: String should have at most 1024 characters",
        ("a@example.com", "pass\x00word-1"): "password: Value error, must not contain NUL characters",
        ("no email", ""): "email: is not an email address; password: String should have at least 8 characters",
    }
    for (email, password), message in cases.items():
        assert_fails(run_cli("user", "create", email, "--password-stdin", env=cli_env, stdin=password + "\n"), message)
    assert run_cli("user", "list", env=cli_env).stdout == ""  # nothing was created

    created = run_cli("user", "create", "New@Example.com", "--password-stdin", env=cli_env, stdin="pass word 1\n")
    assert created.returncode == 0, created.stderr
    assert re.fullmatch(r"created user new@example\.com \(id [0-9a-f-]{36}\)\n", created.stdout)
    assert created.stderr == ""
    duplicate = run_cli("user", "create", "NEW@example.com", "--password", "password-2", env=cli_env)
    assert_fails(duplicate, "an account with this email already exists")
    both = run_cli("user", "create", "b@example.com", "--password", "p-12345678", "--password-stdin", env=cli_env)
    assert_fails(both, "give --password or --password-stdin, not both")


async def test_user_list_passwd_and_delete(cli_env: dict[str, str], running: Running) -> None:
    for email, name in [("first@example.com", "一"), ("second@example.com", None)]:
        extra = ["--display-name", name] if name else []
        created = await cli_async(
            "user", "create", email, "--password-stdin", *extra, env=cli_env, stdin="password-1\n"
        )
        assert created.returncode == 0, created.stderr
    listed = await cli_async("user", "list", env=cli_env)
    lines = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [(line[0], line[3]) for line in lines] == [("first@example.com", "一"), ("second@example.com", "")]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", line[2]) for line in lines)

    async def login(email: str, password: str) -> int:
        body = {"email": email, "password": password}
        return (await running.client.post("/api/auth/login", json=body)).status_code

    before = (await cli_async("token", "first@example.com", env=cli_env)).stdout.strip()
    short = await cli_async("user", "passwd", "first@example.com", "--password-stdin", env=cli_env, stdin="short\n")
    assert_fails(short, "password: String should have at least 8 characters")
    assert await login("first@example.com", "password-1") == 200
    changed = await cli_async(
        "user", "passwd", "First@example.com", "--password-stdin", env=cli_env, stdin="password-2\r\n"
    )
    assert (changed.returncode, changed.stdout) == (
        0,
        "changed the password of First@example.com; its earlier login tokens are refused from now on\n",
    )
    assert await login("first@example.com", "password-2") == 200
    assert await login("first@example.com", "password-1") == 401
    refused = await running.client.get("/api/me", headers=auth(before))
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "token_revoked")
    assert_fails(
        await cli_async("user", "passwd", "ghost@example.com", "--password", "password-3", env=cli_env),
        "no user ghost@example.com",
    )

    token = (await cli_async("token", "first@example.com", env=cli_env)).stdout.strip()
    other = (await cli_async("token", "second@example.com", env=cli_env)).stdout.strip()
    agent = await create_agent(running.client, token)
    assert (await chat(running, token, agent["id"], "以后不要叫我宝贝")).status_code == 200  # a memory, too
    other_agent = await create_agent(running.client, other)

    kept = await cli_async("user", "delete", "first@example.com", env=cli_env, stdin="n\n")
    assert kept.returncode == 1
    assert (await running.client.get("/api/me", headers=auth(token))).status_code == 200

    deleted = await cli_async("user", "delete", "first@example.com", "--yes", env=cli_env)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout == (
        "deleted user first@example.com and all of theirs (1 agent, 1 conversation, 2 messages, 1 memory)\n"
    )
    assert (await running.client.get("/api/me", headers=auth(token))).status_code == 401
    async with running.db.read() as session:
        assert await get_user_by_email(session, "first@example.com") is None
        assert await session.get(Agent, agent["id"]) is None
        for model in (Conversation, Message, Memory):
            assert (await session.scalars(select(model.id).where(model.agent_id == agent["id"]))).all() == []
    assert [a["id"] for a in (await running.client.get("/api/agents", headers=auth(other))).json()["agents"]] == [
        other_agent["id"]
    ]
    assert [line.split("\t")[0] for line in (await cli_async("user", "list", env=cli_env)).stdout.splitlines()] == [
        "second@example.com"
    ]
    assert_fails(
        await cli_async("user", "delete", "first@example.com", "--yes", env=cli_env), "no user first@example.com"
    )


def test_a_port_in_use_is_said_plainly_before_any_banner(fresh_sqlite: dict[str, str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        # MEMCHAT_PORT names the port as --port does (scripts/run passes both ways).
        by_env = run_cli("serve", env={**fresh_sqlite, "MEMCHAT_PORT": str(port)})
        by_option = run_cli("serve", "--host", "127.0.0.1", "--port", str(port), env=fresh_sqlite)
    for result in (by_env, by_option):
        assert_fails(
            result,
            f"port {port} on 127.0.0.1 is already in use (another memchat, or another program). "
            f"Pick another: memchat serve --port {port + 1}, or MEMCHAT_PORT={port + 1} make run.",
        )
