"""Routing around the console: unknown API paths are JSON 404s, every other path is the console's."""

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from memchat.settings import Settings
from tests.conftest import Running, auth, serve_app, signup

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
UNKNOWN_API_PATHS = [
    "/api",
    "/api/nonexistent",
    "/api/agents/x/y/z",
    "/api/agents/",  # no redirect to /api/agents: a trailing slash is another path
    "/v1",
    "/v1/nonexistent",
    "/v1/chat/completion",
]


def assert_not_found(response: httpx.Response, method: str, path: str) -> None:
    """memchat's error shape; under /v1, OpenAI's (openai_compat.errors)."""
    assert response.status_code == 404, (method, path, response.status_code, response.text[:200])
    assert response.headers["content-type"] == "application/json"
    message = f"no such route: {method} {path}"
    if path == "/v1" or path.startswith("/v1/"):
        error = {"message": message, "type": "invalid_request_error", "param": None, "code": "not_found"}
        assert response.json() == {"error": error}
    else:
        assert response.json() == {"error": {"code": "not_found", "message": message}}


@pytest.fixture
async def console(settings: Settings, tmp_path: Path) -> AsyncIterator[Running]:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<html>console</html>")
    (dist / "assets" / "app.js").write_text("console.log(1)")
    async with serve_app(settings, web_dist_dir=dist) as served:
        yield served


async def test_any_method_on_an_unknown_api_path_is_a_json_404(console: Running) -> None:
    token = await signup(console.client)
    for path in UNKNOWN_API_PATHS:
        for method in METHODS:
            for headers in ({}, auth(token)):
                response = await console.client.request(method, path, headers=headers, json={"x": 1})
                assert_not_found(response, method, path)


async def test_a_known_api_path_with_a_wrong_method_stays_405(console: Running) -> None:
    for method, path in [
        ("PUT", "/api/agents"),
        ("DELETE", "/api/auth/login"),
        ("GET", "/api/chat"),
        ("PUT", "/api/agents/some-id"),
        ("GET", "/v1/chat/completions"),
        ("POST", "/v1/models"),
    ]:
        response = await console.client.request(method, path)
        assert response.status_code == 405, (method, path)
        assert response.json()["error"]["code"] == "method_not_allowed"


async def test_other_paths_still_fall_back_to_the_console(console: Running) -> None:
    for path in ["/", "/agents/123/chat", "/apis", "/v1x/page", "/login"]:
        response = await console.client.get(path)
        assert response.status_code == 200, path
        assert response.text == "<html>console</html>"
    assert (await console.client.get("/assets/app.js")).text == "console.log(1)"
    # the console serves pages only: another method on one of its paths is not allowed
    assert (await console.client.post("/agents/123/chat")).status_code == 405
    assert (await console.client.get("/healthz")).status_code == 200
    assert (await console.client.get("/openapi.json")).status_code == 200


async def test_unknown_api_paths_are_404_without_a_built_console(running: Running) -> None:
    assert "npm run build" in (await running.client.get("/some/page")).text
    for method in METHODS:
        assert_not_found(await running.client.request(method, "/v1/nonexistent"), method, "/v1/nonexistent")
        assert_not_found(await running.client.request(method, "/api/nonexistent"), method, "/api/nonexistent")
