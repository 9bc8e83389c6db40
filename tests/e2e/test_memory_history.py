"""The memory library's history: each change with before/after and who made it, and a revert button."""

from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server
from tests.e2e.support import chat_turn, create_agent

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

SAID = "我喜欢在晚上聊天"
EDITED = "我喜欢在深夜聊天"


def test_history_shows_each_change_and_revert_restores_it(
    logged_in: Any, server: Server, account: Account, screenshots: Screenshots
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    chat_turn(server, account.token, agent_id, SAID)

    page.goto(f"/agents/{agent_id}/memories")
    card = page.get_by_test_id("memory-card")
    expect(card.get_by_test_id("memory-content")).to_have_text(SAID)
    card.get_by_test_id("memory-edit").click()
    card.get_by_test_id("memory-edit-content").fill(EDITED)
    card.get_by_test_id("memory-save").click()
    expect(card.get_by_test_id("memory-content")).to_have_text(EDITED)

    card.get_by_test_id("memory-history-toggle").click()
    events = card.get_by_test_id("memory-event")
    expect(events).to_have_count(2)
    newest, first = events.nth(0), events.nth(1)
    expect(newest.get_by_test_id("memory-event-kind")).to_have_text("被编辑")
    expect(newest.get_by_test_id("memory-event-actor")).to_have_text("你")
    expect(newest.get_by_test_id("memory-event-before-content")).to_have_text(SAID)
    expect(newest.get_by_test_id("memory-event-after-content")).to_have_text(EDITED)
    expect(first.get_by_test_id("memory-event-kind")).to_have_text("从对话中提取")
    expect(first.get_by_test_id("memory-event-actor")).to_have_text("规则")
    expect(first.get_by_test_id("memory-event-before")).to_contain_text("此前不存在")
    screenshots.take(page, "memory-history")

    # Reverting asks first; cancelling changes nothing.
    newest.get_by_test_id("memory-event-revert").click()
    expect(newest).to_contain_text("把这条记忆恢复成这次变更之前的样子？")
    newest.get_by_role("button", name="取消").click()
    expect(events).to_have_count(2)
    expect(card.get_by_test_id("memory-content")).to_have_text(EDITED)
    newest.get_by_test_id("memory-event-revert").click()
    newest.get_by_test_id("memory-event-revert-confirm").click()
    expect(card.get_by_test_id("memory-content")).to_have_text(SAID)
    expect(events).to_have_count(3)
    expect(events.nth(0).get_by_test_id("memory-event-kind")).to_have_text("被恢复")
    expect(events.nth(0).get_by_test_id("memory-event-after-content")).to_have_text(SAID)

    page.reload()
    expect(page.get_by_test_id("memory-content")).to_have_text(SAID)
