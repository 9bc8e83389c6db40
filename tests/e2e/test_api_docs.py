"""/docs and /redoc render in Chromium with every request off loopback refused (no network)."""

from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture
def offline_page(browser: Any, server: Server) -> Any:
    """A page that can reach memchat only: anything else is aborted and recorded."""
    context = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 800})
    context.set_default_timeout(15_000)
    blocked: list[str] = []

    def route(route: Any) -> None:
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.blocked = blocked
    try:
        yield page
    finally:
        context.close()


def test_swagger_ui_shows_the_operations_offline(offline_page: Any) -> None:
    offline_page.goto("/docs")
    offline_page.locator(".opblock-summary-path", has_text="/api/agents").first.wait_for()
    assert offline_page.locator(".opblock").count() > 10
    assert offline_page.get_by_text("/api/auth/login").first.is_visible()
    assert offline_page.locator(".errors-wrapper").count() == 0
    assert offline_page.blocked == []


def test_redoc_renders_offline(offline_page: Any) -> None:
    offline_page.goto("/redoc")
    offline_page.locator("h1", has_text="memchat").first.wait_for()
    offline_page.get_by_text("/api/agents").first.wait_for(state="attached")
    assert offline_page.locator("li[data-item-id]").count() > 10
    offline_page.get_by_text("API docs by Redocly").wait_for()
    # The footer's logo from cdn.redoc.ly is never asked for (the page's own policy refuses it);
    # ReDoc drops the image and the footer stays.
    offline_page.locator("img[alt='redocly logo']").wait_for(state="detached")
    assert offline_page.blocked == []
