"""Every console page outside the chat at 1280 px and at 390 px (a phone): nothing wider than the
screen, every control inside it. Screenshots of each (`MEMCHAT_E2E_SCREENSHOTS=docs/screenshots`)."""

from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server
from tests.e2e.support import chat_turn, create_agent

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

PROFILE = {
    "status": "在线",
    "lastActive": "3 分钟前",
    "relationship": "暧昧期",
    "chemistryLabel": "默契度",
    "chemistry": "78",
}

# Controls that stick out of the screen, and how far the page scrolls sideways.
LAYOUT_PROBLEMS = """() => {
  const width = window.innerWidth;
  const outside = [];
  for (const el of document.querySelectorAll("button, a, input, select, textarea, summary")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
    const label = (el.textContent || el.getAttribute("name") || el.tagName).trim();
    if (box.left < -1 || box.right > width + 1) outside.push(label);
  }
  return { scroll: document.documentElement.scrollWidth - width, outside };
}"""


def check_fits(page: Any, name: str, width: int, screenshots: Screenshots) -> None:
    problems = page.evaluate(LAYOUT_PROBLEMS)
    assert problems["scroll"] <= 0, f"{name} at {width} px scrolls sideways by {problems['scroll']} px"
    assert problems["outside"] == [], f"{name} at {width} px: controls outside the screen: {problems['outside']}"
    screenshots.take(page, f"{name}-{width}")


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_fits_the_screen(
    page: Any, server: Server, account: Account, screenshots: Screenshots, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
    page.goto("/login")
    expect(page.get_by_role("heading", name="登录")).to_be_visible()
    check_fits(page, "login", width, screenshots)
    page.goto("/signup")
    expect(page.get_by_role("heading", name="注册")).to_be_visible()
    check_fits(page, "signup", width, screenshots)

    agent_id = create_agent(server, account.token, "小雨", handle="@xiaoyu", profile=PROFILE)
    chat_turn(server, account.token, agent_id, "我喜欢在晚上聊天，回复短一点就好")
    chat_turn(server, account.token, agent_id, "记住，我不喜欢被催")
    page.evaluate("token => localStorage.setItem('memchat.token', token)", account.token)

    page.goto("/")
    expect(page.get_by_test_id("agent-card")).to_have_count(1)
    check_fits(page, "agents", width, screenshots)

    page.goto("/agents/new")
    expect(page.get_by_test_id("hint-chemistry")).to_be_visible()
    check_fits(page, "agent-form", width, screenshots)

    page.goto(f"/agents/{agent_id}/memories")
    cards = page.get_by_test_id("memory-card")
    expect(cards).to_have_count(2)
    page.get_by_test_id("select-all").check()
    expect(page.get_by_test_id("bulk-archive")).to_be_visible()
    check_fits(page, "memories", width, screenshots)
    page.get_by_test_id("select-all").uncheck()
    cards.first.get_by_test_id("memory-history-toggle").click()
    expect(cards.first.get_by_test_id("memory-event")).to_have_count(1)
    check_fits(page, "memory-history", width, screenshots)
    cards.first.get_by_test_id("memory-archive").click()
    expect(page.get_by_test_id("undo-toast")).to_be_visible()
    check_fits(page, "memory-undo", width, screenshots)

    page.goto("/account")
    expect(page.get_by_test_id("delete-account")).to_be_visible()
    check_fits(page, "account", width, screenshots)

    page.goto("/keys")
    page.locator("input[name=keyName]").fill("我的脚本")
    page.get_by_test_id("key-create").click()
    expect(page.get_by_test_id("new-key")).to_be_visible()
    check_fits(page, "api-keys", width, screenshots)

    page.goto("/no/such/page")
    expect(page.get_by_test_id("not-found")).to_be_visible()
    check_fits(page, "not-found", width, screenshots)
    page.get_by_test_id("back-home").click()
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()


def test_an_unknown_agent_offers_the_way_back(logged_in: Any) -> None:
    page = logged_in
    page.goto("/agents/no-such-agent/memories")
    expect(page.get_by_test_id("not-found")).to_be_visible()
    expect(page.get_by_role("heading", name="没有找到。")).to_be_visible()
    page.get_by_test_id("back-home").click()
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()
    page.goto("/agents/no-such-agent/edit")
    expect(page.get_by_test_id("back-home")).to_be_visible()
