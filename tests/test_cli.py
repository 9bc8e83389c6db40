"""The CLI and the migrations: refuse an un-migrated DB, migrate, users and tokens from the shell."""

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from memchat.app import create_app
from memchat.db.engine import create_database
from memchat.db.migrate import current_revision, head_revision
from memchat.settings import Settings
from tests.conftest import auth, start_server


def run_cli(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memchat", *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


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
        async with httpx.AsyncClient(base_url=base_url) as client:
            me = await client.get("/api/me", headers=auth(token.stdout.strip()))
            assert me.status_code == 200
            assert me.json()["email"] == "cli@example.com"
            # the JWT secret was generated once and kept in the data folder
            assert (Path(fresh_sqlite["MEMCHAT_DATA_DIR"]) / "jwt_secret").is_file()
            health = await client.get("/healthz")
            assert health.json() == {"status": "ok", "database": "ok", "llm": "remote"}
            root = await client.get("/")
            assert "npm run build" in root.text
    finally:
        server.should_exit = True
        await task


def test_openapi_command_prints_the_schema(fresh_sqlite: dict[str, str]) -> None:
    result = run_cli("openapi", env=fresh_sqlite)
    assert result.returncode == 0, result.stderr
    assert '"/api/chat"' in result.stdout
    assert '"MessagePage"' in result.stdout


async def test_console_is_served_with_spa_fallback(running_console: tuple[str, Path]) -> None:
    base_url, dist = running_console
    async with httpx.AsyncClient(base_url=base_url) as client:
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
