"""Sign-up, log-in and the session ending on a 401, in Chromium against a real server."""

import re
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import PASSWORD, Account, Screenshots

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect


def test_sign_up_lands_on_the_empty_agent_list(page: Any, screenshots: Screenshots) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.get_by_role("button", name="还没有账号？注册").click()
    expect(page).to_have_url(re.compile(r"/signup$"))

    page.locator("input[name=email]").fill(f"e2e-{uuid.uuid4().hex[:10]}@example.com")
    page.locator("input[name=password]").fill(PASSWORD)
    page.locator("input[name=displayName]").fill("小林")
    screenshots.take(page, "signup")
    page.get_by_role("button", name="注册", exact=True).click()

    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()
    expect(page.get_by_text("还没有智能体，先新建一个吧。")).to_be_visible()
    expect(page.get_by_test_id("current-user")).to_have_text("小林")
    assert page.evaluate("localStorage.getItem('memchat.token')")


def test_log_in_shows_a_readable_error_then_succeeds(page: Any, account: Account, screenshots: Screenshots) -> None:
    page.goto("/login")
    page.locator("input[name=email]").fill(account.email)
    page.locator("input[name=password]").fill("wrong-password")
    page.get_by_role("button", name="登录", exact=True).click()
    expect(page.get_by_test_id("error-banner")).to_contain_text("邮箱或密码不正确。")

    page.locator("input[name=password]").fill(PASSWORD)
    screenshots.take(page, "login")
    page.get_by_role("button", name="登录", exact=True).click()
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()
    expect(page.get_by_test_id("current-user")).to_have_text(account.email)


def test_a_401_sends_you_back_to_log_in(page: Any) -> None:
    page.goto("/login")
    page.evaluate("localStorage.setItem('memchat.token', 'not-a-valid-token')")
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    expect(page.get_by_text("登录已失效，请重新登录。")).to_be_visible()
    assert page.evaluate("localStorage.getItem('memchat.token')") is None


def test_log_out_forgets_the_token(logged_in: Any) -> None:
    page = logged_in
    page.goto("/")
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()
    page.get_by_role("button", name="退出登录").click()
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
