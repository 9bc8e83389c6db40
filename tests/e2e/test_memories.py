"""The memory library: a preference said in chat becomes a memory; filter, edit, archive, add, delete."""

import re
from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server, Upstream
from tests.e2e.support import chat_turn, create_agent, history

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

PREFERENCE = "我喜欢在晚上聊天，回复短一点就好"


def test_a_preference_said_in_chat_becomes_a_memory(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, screenshots: Screenshots
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    page.goto(f"/agents/{agent_id}/chat")
    page.get_by_test_id("composer").fill(PREFERENCE)
    page.get_by_test_id("send").click()
    expect(page.locator("[data-testid=message][data-role=assistant]")).to_have_count(1)

    # The side panel picks the new memory up without a reload.
    panel_memory = page.get_by_test_id("panel-memory")
    expect(panel_memory).to_have_count(1)
    expect(panel_memory).to_contain_text("偏好")
    expect(panel_memory).to_contain_text(PREFERENCE)
    screenshots.take(page, "chat-memory")

    page.get_by_role("link", name="打开记忆库").click()
    expect(page).to_have_url(re.compile(rf"/agents/{agent_id}/memories$"))
    card = page.get_by_test_id("memory-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("memory-type")).to_have_text("偏好")
    expect(card.get_by_test_id("memory-content")).to_have_text(PREFERENCE)
    expect(card.locator("[data-importance]")).to_have_attribute("data-importance", "3")

    page.get_by_test_id("filter-boundary").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(0)
    page.get_by_test_id("filter-preference").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(1)
    screenshots.take(page, "memories")

    # The memory links to the message it came from.
    user_message = history(server, account.token, agent_id)[0]
    page.get_by_test_id("memory-source").click()
    expect(page).to_have_url(re.compile(rf"/agents/{agent_id}/chat\?message={user_message['id']}$"))
    expect(page.locator(f"#message-{user_message['id']}")).to_have_class(re.compile(r"\bfocused\b"))


def test_a_source_message_on_an_earlier_page_is_paged_in(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    chat_turn(server, account.token, agent_id, "记住，我不喜欢被催")
    for n in range(30):
        chat_turn(server, account.token, agent_id, f"闲聊 {n}")
    source = history(server, account.token, agent_id)[0]

    page.goto(f"/agents/{agent_id}/memories")
    card = page.get_by_test_id("memory-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("memory-type")).to_have_text("边界")
    card.get_by_test_id("memory-source").click()
    focused = page.locator(f"#message-{source['id']}")
    expect(focused).to_have_class(re.compile(r"\bfocused\b"))
    expect(focused).to_be_in_viewport()


def test_edit_archive_add_and_delete_memories(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    chat_turn(server, account.token, agent_id, PREFERENCE)
    page.goto(f"/agents/{agent_id}/memories")
    card = page.get_by_test_id("memory-card")
    expect(card).to_have_count(1)

    # Edit the content and the importance; both are stored.
    card.get_by_test_id("memory-edit").click()
    card.get_by_test_id("memory-edit-content").fill("喜欢晚上聊天，回复简短")
    card.get_by_test_id("memory-save").click()
    expect(card.get_by_test_id("memory-content")).to_have_text("喜欢晚上聊天，回复简短")
    card.get_by_test_id("importance-5").click()
    expect(card.locator("[data-importance]")).to_have_attribute("data-importance", "5")
    page.reload()
    expect(card.get_by_test_id("memory-content")).to_have_text("喜欢晚上聊天，回复简短")
    expect(card.locator("[data-importance]")).to_have_attribute("data-importance", "5")

    # Archive moves it out of the active list; restore brings it back.
    card.get_by_test_id("memory-archive").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(0)
    page.get_by_test_id("status-archived").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(1)
    page.get_by_test_id("memory-card").get_by_test_id("memory-archive").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(0)
    page.get_by_test_id("status-active").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(1)

    # Add one by hand.
    page.get_by_test_id("add-memory").click()
    form = page.get_by_test_id("add-memory-form")
    form.locator("select[name=type]").select_option("boundary")
    form.get_by_test_id("importance-4").click()
    form.locator("textarea[name=content]").fill("工作时间不要发消息")
    form.get_by_test_id("add-memory-submit").click()
    added = page.get_by_test_id("memory-card").filter(has_text="工作时间不要发消息")
    expect(added.get_by_test_id("memory-type")).to_have_text("边界")
    expect(added.locator("[data-importance]")).to_have_attribute("data-importance", "4")
    expect(added).to_contain_text("手动添加")

    # Delete asks first, then the memory is gone.
    edited = page.get_by_test_id("memory-card").filter(has_text="喜欢晚上聊天，回复简短")
    edited.get_by_test_id("memory-delete").click()
    edited.get_by_test_id("memory-delete-confirm").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(1)
    # The toast offers 撤销 for a while (test_memory_library.py); closing it makes the delete final.
    page.get_by_test_id("undo-toast-close").click()
    expect(page.get_by_test_id("undo-toast")).to_have_count(0)
    page.reload()
    expect(page.get_by_test_id("memory-card")).to_have_count(1)
    expect(page.get_by_test_id("memory-card")).to_contain_text("工作时间不要发消息")
    with server.api(account.token) as api:
        memories = api.get(f"/api/agents/{agent_id}/memories").json()["memories"]
    assert [(m["type"], m["content"], m["importance"]) for m in memories] == [("boundary", "工作时间不要发消息", 4)]
