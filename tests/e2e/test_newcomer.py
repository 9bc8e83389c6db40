"""What a newcomer meets first, at 1280 px and at 390 px (a phone): a dead conversation link, a
reply that broke off, a restore in the memory history, the sign-up hint, the agent form's help
and the end of a deleted account."""

import re
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import PASSWORD, Account, Server, Upstream
from tests.e2e.support import chat_turn, create_agent, message_items, open_chat, send_message

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

WIDTHS = [1280, 390]


def sized(page: Any, width: int) -> Any:
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
    return page


def fits(page: Any) -> None:
    """Nothing wider than the screen."""
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


@pytest.mark.parametrize("width", WIDTHS)
def test_a_deleted_conversations_link_offers_the_way_back(
    logged_in: Any, server: Server, account: Account, width: int
) -> None:
    page = sized(logged_in, width)
    agent_id = create_agent(server, account.token, "小雨")
    with server.api(account.token) as api:
        created = api.post(f"/api/agents/{agent_id}/conversations", json={"title": "旅行"})
        created.raise_for_status()
        conversation_id = created.json()["id"]
        api.delete(f"/api/conversations/{conversation_id}").raise_for_status()

    page.goto(f"/agents/{agent_id}/chat?conversation={conversation_id}")
    expect(page.get_by_test_id("error-text")).to_have_text("找不到这个对话。")
    # No 重试 (it would find nothing again): a way back to the agent's main conversation instead.
    expect(page.get_by_test_id("chat-not-found").get_by_role("button", name="重试")).to_have_count(0)
    back = page.get_by_test_id("chat-way-back")
    expect(back).to_have_text("回到默认对话")
    fits(page)
    back.click()
    expect(page).to_have_url(re.compile(rf"/agents/{agent_id}/chat$"))
    expect(page.get_by_test_id("composer")).to_be_visible()

    # An agent that is gone: back to the list of agents.
    page.goto(f"/agents/{uuid.uuid4().hex}/chat")
    page.get_by_test_id("chat-way-back").click()
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reply_that_broke_off_is_not_labelled_not_sent(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, width: int
) -> None:
    page = sized(logged_in, width)
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    upstream.script({"deltas": ["说到一半", "就断了", "（不会出现）"], "cutAfter": 2})
    send_message(page, "你那边信号好吗")

    expect(message_items(page).last).to_have_attribute("data-status", "incomplete")
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_contain_text("回复出错")
    expect(banner).to_contain_text("模型服务中途出错，已收到的部分作为未完成的回复保存。")
    expect(banner).not_to_contain_text("发送失败")
    # The message was sent: it is the stored one, with the server's id.
    expect(message_items(page).first).to_have_attribute("data-status", "completed")
    fits(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_message_refused_before_it_is_stored_is_labelled_not_sent(
    logged_in: Any, server: Server, account: Account, width: int
) -> None:
    page = sized(logged_in, width)
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    send_message(page, "长" * 20_000)  # over the request's limit: refused, nothing stored
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_contain_text("发送失败")
    with server.api(account.token) as api:
        assert api.get(f"/api/agents/{agent_id}/messages").json()["messages"] == []


def _memories(server: Server, token: str, agent_id: str) -> list[dict[str, Any]]:
    with server.api(token) as api:
        response = api.get(f"/api/agents/{agent_id}/memories")
        response.raise_for_status()
        found: list[dict[str, Any]] = response.json()["memories"]
        return found


@pytest.mark.parametrize("width", WIDTHS)
def test_an_undone_archive_shows_as_a_restore_and_keeps_updated_at(
    logged_in: Any, server: Server, account: Account, width: int
) -> None:
    page = sized(logged_in, width)
    agent_id = create_agent(server, account.token, "小雨")
    chat_turn(server, account.token, agent_id, "我喜欢在晚上聊天")
    [memory] = _memories(server, account.token, agent_id)

    page.goto(f"/agents/{agent_id}/memories")
    card = page.get_by_test_id("memory-card")
    card.get_by_test_id("memory-archive").click()
    expect(card).to_have_count(0)
    page.get_by_test_id("undo").click()
    expect(page.get_by_test_id("memory-card")).to_have_count(1)

    card = page.get_by_test_id("memory-card")
    expect(card.get_by_test_id("memory-updated")).to_have_attribute("data-updated-ms", str(memory["updatedAtMs"]))
    card.get_by_test_id("memory-history-toggle").click()
    kinds = card.get_by_test_id("memory-event-kind")
    expect(kinds).to_have_text(["从归档中恢复", "被归档", "从对话中提取"])
    fits(page)
    [after] = _memories(server, account.token, agent_id)
    assert after["updatedAtMs"] == memory["updatedAtMs"]


@pytest.mark.parametrize("width", WIDTHS)
def test_sign_up_shows_the_password_rule_while_typing(page: Any, width: int) -> None:
    sized(page, width)
    page.goto("/signup")
    password = page.locator("input[name=password]")
    password.fill("short")
    hint = page.get_by_test_id("password-hint")
    expect(hint).to_be_visible()
    expect(hint).to_have_text("至少 8 个字符")
    expect(password).to_have_attribute("aria-describedby", "password-hint")
    fits(page)
    page.goto("/login")
    expect(page.locator("input[name=password]")).to_be_visible()
    expect(page.get_by_test_id("password-hint")).to_have_count(0)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_agent_form_speaks_of_the_form_not_of_server_settings(logged_in: Any, width: int) -> None:
    page = sized(logged_in, width)
    page.goto("/agents/new")
    expect(page.get_by_text("都可以留空。")).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("MEMCHAT_")
    fits(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_deleting_the_account_says_it_is_done(logged_in: Any, server: Server, account: Account, width: int) -> None:
    page = sized(logged_in, width)
    page.goto("/account")
    form = page.get_by_test_id("delete-account-form")
    form.locator("input[name=confirmEmail]").fill(account.email)
    form.get_by_test_id("delete-account").click()

    expect(page).to_have_url(re.compile(r"/login$"))
    expect(page.get_by_test_id("account-deleted")).to_have_text("账号已删除，它的智能体、对话和记忆都已清除。")
    fits(page)
    with server.api() as api:
        response = api.post("/api/auth/login", json={"email": account.email, "password": PASSWORD})
        assert response.status_code == 401
    # Only that visit says so: a later visit to the sign-in page is the plain one.
    page.goto("/login")
    expect(page.locator("input[name=email]")).to_be_visible()
    expect(page.get_by_test_id("account-deleted")).to_have_count(0)
