"""MEMCHAT_SUMMARY=digest in the console: after many turns the chat's side panel shows each turn once,
and what the user marked early (a boundary, a name) is still there after its turn left the window."""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, Upstream, serve_memchat, upstream_env
from tests.e2e.support import chat_turn, create_agent, open_chat, signed_in_page

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

EARLY = "别叫我宝贝，我不喜欢。我叫林晓，住在杭州。"
TURNS = 24
SMALL_TALK = "今天下午去公园散步，看到很多人在放风筝，天气真好。晚上还和朋友吃了顿火锅，聊到很晚才回家。"


@pytest.fixture(scope="module")
def digest_server(e2e_dir: Path, upstream: Upstream) -> Iterator[Server]:
    env = {**upstream_env(upstream), "MEMCHAT_SUMMARY": "digest"}
    with serve_memchat(e2e_dir / f"digest-{uuid.uuid4().hex[:6]}", env) as base_url:
        yield Server(base_url=base_url)


def test_the_side_panel_shows_a_summary_that_does_not_repeat(
    browser: Any, digest_server: Server, upstream: Upstream
) -> None:
    upstream.reset()  # every turn gets the upstream's default reply
    with digest_server.api() as api:
        email = f"digest-{uuid.uuid4().hex[:8]}@example.com"
        token = api.post("/api/auth/signup", json={"email": email, "password": "password-dg-1"}).json()["token"]
    agent_id = create_agent(digest_server, token, "小雨")
    chat_turn(digest_server, token, agent_id, EARLY)
    for i in range(2, TURNS + 1):
        chat_turn(digest_server, token, agent_id, f"第{i}轮：{SMALL_TALK}")

    with signed_in_page(browser, digest_server, token) as page:
        open_chat(page, agent_id)
        summary = page.get_by_test_id("summary")
        expect(summary).to_contain_text(f"第{TURNS}轮：")
        lines = summary.inner_text().split("\n")
        # the first turn left the window; its boundary and the name stayed, as the user said them
        assert lines[:2] == ["用户交代：别叫我宝贝，我不喜欢。", "用户交代：我叫林晓，住在杭州。"]
        assert EARLY not in summary.inner_text()
        turn_lines = [line for line in lines[2:] if line.startswith("用户：")]
        assert len(turn_lines) == len(set(turn_lines)) > 1  # each turn once
        assert turn_lines[-1] == f"用户：第{TURNS}轮：{SMALL_TALK}"
        assert "用户：第2轮：" not in summary.inner_text()  # the oldest turns left, whole
