"""schemathesis against /openapi.json of a real server: no 5xx, responses match the schema."""

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import create_agent, signup
from tests.serve import Server, free_port
from tests.upstream import TestUpstream


@pytest.fixture
async def server(database_url: str, upstream: TestUpstream, tmp_path: Path) -> AsyncIterator[Server]:
    env = {
        **os.environ,
        "MEMCHAT_DATABASE_URL": database_url,
        "MEMCHAT_LLM_BASE_URL": upstream.base_url,
        "MEMCHAT_LLM_MAX_RETRIES": "0",
        "MEMCHAT_JWT_SECRET": "schemathesis-secret-0123456789abcdef",
        "MEMCHAT_DATA_DIR": str(tmp_path / "data"),
        "MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE": "0",
    }
    running = Server(env, free_port(), tmp_path / "server.log")
    await running.start()
    yield running
    running.stop()


async def test_api_conforms_to_its_schema(server: Server, tmp_path: Path) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        token = await signup(client)
        await create_agent(client, token)
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            f"{server.url}/openapi.json",
            "--header",
            f"Authorization: Bearer {token}",
            "--checks",
            "not_a_server_error,response_schema_conformance,content_type_conformance",
            "--max-examples",
            "10",
            "--max-time",
            "45",
            "--seed",
            "1",
            "--workers",
            "1",
            "--warnings",
            "off",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Traceback" not in (tmp_path / "server.log").read_text()
