"""schemathesis against /openapi.json of a real server: no 5xx, responses match the schema."""

import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import create_agent, signup
from tests.serve import Server

ROOT = Path(__file__).resolve().parent.parent


async def test_api_conforms_to_its_schema(server: Server, tmp_path: Path) -> None:
    async with httpx.AsyncClient(base_url=server.url, verify=False) as client:
        token = await signup(client)
        await create_agent(client, token)
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            f"{server.url}/openapi.json",
            "--header",
            f"Authorization: Bearer {token}",
            # it would delete the token's user, and every later call would be a 401
            "--exclude-name",
            "DELETE /api/me",
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
        # every generated JSON body, and the same bodies with a lone surrogate in one string field
        env={**os.environ, "SCHEMATHESIS_HOOKS": "tests.schemathesis_hooks", "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Traceback" not in (tmp_path / "server.log").read_text()
