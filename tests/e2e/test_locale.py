"""Errors read in the UI language by their code, the server's English only under 详情; the English
locale and its switch (remembered in localStorage, Chinese by default)."""

import re
from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server
from tests.e2e.support import create_agent

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

LATIN = re.compile(r"[A-Za-z]")
HAN = re.compile(r"[\u4e00-\u9fff]")


def test_an_error_reads_in_chinese_with_the_server_words_only_in_details(
    page: Any, account: Account, screenshots: Screenshots
) -> None:
    page.goto("/login")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    page.locator("input[name=email]").fill(account.email)
    page.locator("input[name=password]").fill("wrong-password")
    page.get_by_role("button", name="登录", exact=True).click()
    banner = page.get_by_test_id("error-banner")
    expect(banner.get_by_test_id("error-text")).to_have_text("邮箱或密码不正确。")
    assert not LATIN.search(banner.get_by_test_id("error-text").inner_text())
    # The server's own words are folded away under 详情 until asked for.
    detail = banner.get_by_test_id("error-detail")
    expect(detail.locator("code")).to_be_hidden()
    detail.locator("summary").click()
    expect(detail.locator("code")).to_have_text("wrong email or password")
    expect(detail.locator("summary")).to_have_text("详情")
    screenshots.take(page, "error-details")


def test_a_memory_error_is_localized_by_its_code(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    with server.api(account.token) as api:
        api.post(
            f"/api/agents/{agent_id}/memories", json={"type": "preference", "content": "喜欢猫"}
        ).raise_for_status()
    page.goto(f"/agents/{agent_id}/memories")
    page.get_by_test_id("add-memory").click()
    page.get_by_test_id("add-memory-form").locator("textarea[name=content]").fill("喜欢猫")
    page.get_by_test_id("add-memory-submit").click()
    banner = page.get_by_test_id("error-banner")
    expect(banner.get_by_test_id("error-text")).to_have_text("已经有一条内容相同的记忆。")
    expect(banner.get_by_test_id("error-detail").locator("code")).to_have_text(
        "an active memory with this content already exists", use_inner_text=False
    )


def test_switch_to_english_and_back(page: Any, account: Account, screenshots: Screenshots) -> None:
    page.goto("/login")
    expect(page.get_by_role("heading", name="登录")).to_be_visible()
    page.get_by_test_id("language-switch").select_option("en")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert page.evaluate("localStorage.getItem('memchat.locale')") == "en"

    # Errors in English too, with no Chinese mixed in.
    page.locator("input[name=email]").fill(account.email)
    page.locator("input[name=password]").fill("wrong-password")
    page.get_by_role("button", name="Log in", exact=True).click()
    text = page.get_by_test_id("error-text")
    expect(text).to_have_text("Wrong email or password.")
    expect(page.get_by_test_id("error-detail").locator("summary")).to_have_text("Details")
    screenshots.take(page, "login-en")

    # The choice survives a reload and a login; every page reads in English.
    page.reload()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.locator("input[name=email]").fill(account.email)
    page.locator("input[name=password]").fill("e2e-password-123")
    page.get_by_role("button", name="Log in", exact=True).click()
    expect(page.get_by_role("heading", name="My agents")).to_be_visible()
    expect(page.get_by_text("No agents yet. Create one to start.")).to_be_visible()
    assert not HAN.search(page.locator("main").inner_text())
    assert not HAN.search(page.locator("header nav").inner_text())
    screenshots.take(page, "agents-en")

    # Back to Chinese from the top bar.
    page.get_by_test_id("language-switch").select_option("zh-CN")
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()
    assert page.evaluate("localStorage.getItem('memchat.locale')") == "zh-CN"


def test_every_console_page_reads_in_english(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    page.evaluate("localStorage.setItem('memchat.locale', 'en')")
    agent_id = create_agent(server, account.token, "Rain", profile={"chemistry": "78"})
    with server.api(account.token) as api:
        api.post(
            f"/api/agents/{agent_id}/memories", json={"type": "preference", "content": "likes cats", "importance": 4}
        ).raise_for_status()
        api.post("/api/keys", json={"name": "script"}).raise_for_status()

    pages = {
        "/": "My agents",
        "/agents/new": "New agent",
        f"/agents/{agent_id}/edit": "Edit agent",
        f"/agents/{agent_id}/memories": "Rain's memories",
        "/account": "My account",
        "/keys": "API keys",
        "/no/such/page": "Not found.",
    }
    for path, heading in pages.items():
        page.goto(path)
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        expect(page.get_by_text("Loading…")).to_have_count(0)
        for part in ("header", "main"):
            text = page.locator(part).inner_text()
            # 中文 names the other language in itself; the profile's prompt format quotes 心动值.
            text = text.replace("中文", "").replace("心动值", "")
            assert not HAN.search(text), f"{path}: Chinese in the English {part}: {text!r}"
    page.goto(f"/agents/{agent_id}/memories")
    page.get_by_test_id("memory-card").get_by_test_id("memory-history-toggle").click()
    expect(page.get_by_test_id("memory-event-kind")).to_have_text("Added by hand")
    assert not HAN.search(page.locator("main").inner_text())
