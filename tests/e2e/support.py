"""API shortcuts for e2e setup, so each test drives through the browser only what it is about."""

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.e2e.conftest import Server


def create_agent(server: Server, token: str, name: str, **fields: Any) -> str:
    with server.api(token) as api:
        response = api.post("/api/agents", json={"name": name, **fields})
        response.raise_for_status()
        agent_id: str = response.json()["id"]
        return agent_id


def chat_turn(server: Server, token: str, agent_id: str, text: str) -> str:
    """One turn the way useChat sends it; returns the streamed reply."""
    body = {
        "id": f"agent:{agent_id}",
        "messages": [{"id": uuid.uuid4().hex, "role": "user", "parts": [{"type": "text", "text": text}]}],
        "trigger": "submit-message",
        "agentId": agent_id,
    }
    with server.api(token) as api:
        response = api.post("/api/chat", json=body)
        response.raise_for_status()
        return response.text


def history(server: Server, token: str, agent_id: str) -> list[dict[str, Any]]:
    with server.api(token) as api:
        response = api.get(f"/api/agents/{agent_id}/messages", params={"limit": 200})
        response.raise_for_status()
        messages: list[dict[str, Any]] = response.json()["messages"]
        return messages


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    """Waits for server-side state the browser cannot show yet (e.g. a reply saved after a stop)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


# --- the chat page (Playwright) ---


def open_chat(page: Any, agent_id: str, query: str = "") -> None:
    from playwright.sync_api import expect

    page.goto(f"/agents/{agent_id}/chat{query}")
    expect(page.get_by_test_id("composer")).to_be_visible()


def send_message(page: Any, text: str) -> None:
    page.get_by_test_id("composer").fill(text)
    page.get_by_test_id("send").click()


def message_items(page: Any) -> Any:
    return page.get_by_test_id("message")


@contextmanager
def signed_in_page(browser: Any, server: Server, token: str) -> Iterator[Any]:
    """A desktop page (Chinese locale) of a server of the test's own, signed in with `token`."""
    context = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 800}, locale="zh-CN")
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto("/login")
        page.evaluate("token => localStorage.setItem('memchat.token', token)", token)
        yield page
    finally:
        context.close()
