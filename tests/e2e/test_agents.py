"""The agent list: create with the whole profile, newest activity first, edit, delete with a confirmation."""

import re
from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server
from tests.e2e.support import chat_turn, create_agent

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

PROFILE = {
    "status": "在线",
    "lastActive": "刚刚活跃",
    "relationship": "暧昧期",
    "headline": "周末去哪儿",
    "topic": "都喜欢爬山",
    "chemistryLabel": "升温中",
    "chemistry": "72",
    "rhythm": "晚上聊得多",
    "profileNote": "慢热，不喜欢被追问",
}


def test_create_an_agent_with_its_profile(
    logged_in: Any, server: Server, account: Account, screenshots: Screenshots
) -> None:
    page = logged_in
    page.goto("/")
    page.get_by_test_id("create-agent").click()
    form = page.get_by_test_id("agent-form")
    form.locator("input[name=name]").fill("小雨")
    form.locator("input[name=handle]").fill("@xiaoyu")
    form.locator("textarea[name=defaultPrompt]").fill("你是小雨，说话温柔。")
    for field, value in PROFILE.items():
        form.locator(f"[name='profile.{field}']").fill(value)
    screenshots.take(page, "agent-form")
    form.get_by_role("button", name="创建").click()

    expect(page).to_have_url(re.compile(r"/agents/[0-9a-f-]+/chat$"))
    agent_id = page.url.split("/")[-2]
    with server.api(account.token) as api:
        agent = api.get(f"/api/agents/{agent_id}").json()
    assert agent["name"] == "小雨"
    assert agent["handle"] == "@xiaoyu"
    assert agent["defaultPrompt"] == "你是小雨，说话温柔。"
    assert agent["profile"] == PROFILE


def test_list_shows_newest_activity_first_with_preview(
    logged_in: Any, server: Server, account: Account, screenshots: Screenshots
) -> None:
    page = logged_in
    older = create_agent(server, account.token, "阿杰", handle="@ajie", profile={"relationship": "朋友"})
    create_agent(server, account.token, "小雨", handle="@xiaoyu", profile={"relationship": "暧昧期"})
    reply = chat_turn(server, account.token, older, "周末有空吗")

    page.goto("/")
    cards = page.get_by_test_id("agent-card")
    expect(cards).to_have_count(2)
    expect(cards.nth(0)).to_contain_text("阿杰")
    expect(cards.nth(0)).to_contain_text("@ajie")
    expect(cards.nth(0)).to_contain_text("朋友")
    expect(cards.nth(0).get_by_test_id("agent-preview")).to_have_text(reply)
    expect(cards.nth(1)).to_contain_text("小雨")
    expect(cards.nth(1).get_by_test_id("agent-preview")).to_have_text("还没有回复")
    screenshots.take(page, "agents")


def test_edit_then_delete_an_agent(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    create_agent(server, account.token, "小雨", profile={"relationship": "暧昧期"})
    page.goto("/")
    card = page.get_by_test_id("agent-card").filter(has_text="小雨")
    card.get_by_role("link", name="编辑").click()

    form = page.get_by_test_id("agent-form")
    expect(form.locator("input[name=name]")).to_have_value("小雨")
    expect(form.locator("[name='profile.relationship']")).to_have_value("暧昧期")
    form.locator("input[name=name]").fill("小雨同学")
    form.locator("[name='profile.relationship']").fill("恋爱中")
    form.get_by_role("button", name="保存修改").click()

    card = page.get_by_test_id("agent-card").filter(has_text="小雨同学")
    expect(card).to_contain_text("恋爱中")
    card.get_by_test_id("delete-agent").click()
    expect(card).to_contain_text("它的对话、消息和记忆都会被删除")
    card.get_by_test_id("delete-agent-confirm").click()
    expect(page.get_by_test_id("agent-card")).to_have_count(0)
    page.reload()
    expect(page.get_by_text("还没有智能体，先新建一个吧。")).to_be_visible()
