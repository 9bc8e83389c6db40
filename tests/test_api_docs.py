"""/docs and /redoc reference only assets served by memchat itself, and each of them is served."""

import re
from pathlib import Path

import pytest

from memchat.api_docs import ASSET_NAMES, assets_dir
from memchat.settings import Settings
from tests.conftest import make_settings, serve_app
from tests.upstream import TestUpstream

CONTENT_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".png": "image/png",
}


@pytest.fixture
def docs_settings(sqlite_url: str, upstream: TestUpstream, tmp_path: Path) -> Settings:
    return make_settings(sqlite_url, upstream, tmp_path)


def _references(html: str) -> list[str]:
    return re.findall(r"""(?:src|href|spec-url)=["']([^"']+)["']""", html) + re.findall(r"""url:\s*'([^']+)'""", html)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_docs_pages_reference_only_local_assets(docs_settings: Settings, page: str) -> None:
    async with serve_app(docs_settings) as running:
        response = await running.client.get(page)
        assert response.status_code == 200
        html = response.text
        references = _references(html)
        assert references, html
        assert "/openapi.json" in references
        for url in references:
            assert url.startswith("/"), f"{page} references {url}, which is not served by memchat"
        assert "cdn." not in html
        assert "fonts.googleapis" not in html
        for url in references:
            served = await running.client.get(url)
            assert served.status_code == 200, url


async def test_every_asset_is_served_with_its_content_type(docs_settings: Settings) -> None:
    async with serve_app(docs_settings) as running:
        for name in ASSET_NAMES:
            response = await running.client.get(f"/docs/assets/{name}")
            assert response.status_code == 200, name
            expected = CONTENT_TYPES[Path(name).suffix]
            assert response.headers["content-type"].split(";")[0] == expected, name
            assert response.content == (assets_dir() / name).read_bytes()
        missing = await running.client.get("/docs/assets/nothing.js")
        assert missing.status_code == 404
