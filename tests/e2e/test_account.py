"""The account page: change the password, export everything as JSON, delete the account after
typing its email."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import PASSWORD, Account, Server
from tests.e2e.support import chat_turn, create_agent

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

NEW_PASSWORD = "another-password-456"


def login_status(server: Server, email: str, password: str) -> int:
    with server.api() as api:
        return api.post("/api/auth/login", json={"email": email, "password": password}).status_code


def test_change_the_password(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    page.goto("/")
    page.get_by_test_id("nav-account").click()
    expect(page).to_have_url(re.compile(r"/account$"))
    expect(page.get_by_test_id("account-email")).to_have_text(account.email)
    form = page.get_by_test_id("password-form")

    form.locator("input[name=currentPassword]").fill("not-my-password")
    form.locator("input[name=newPassword]").fill(NEW_PASSWORD)
    form.get_by_role("button", name="修改密码").click()
    expect(form.get_by_test_id("error-text")).to_have_text("当前密码不正确。")
    assert login_status(server, account.email, PASSWORD) == 200

    form.locator("input[name=currentPassword]").fill(PASSWORD)
    form.locator("input[name=newPassword]").fill(NEW_PASSWORD)
    form.get_by_role("button", name="修改密码").click()
    expect(form.get_by_test_id("password-changed")).to_have_text("密码已修改，下次登录请用新密码。")
    expect(form.get_by_test_id("error-banner")).to_have_count(0)
    assert login_status(server, account.email, PASSWORD) == 401
    assert login_status(server, account.email, NEW_PASSWORD) == 200

    # This tab stays signed in (the server's fresh token replaces the revoked one).
    page.reload()
    expect(page.get_by_test_id("account-email")).to_have_text(account.email)
    page.goto("/")
    expect(page.get_by_role("heading", name="我的智能体")).to_be_visible()


def test_export_my_data(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    chat_turn(server, account.token, agent_id, "记住，我不喜欢被催")
    page.goto("/account")
    with page.expect_download() as download_info:
        page.get_by_test_id("account-export").click()
    download = download_info.value
    assert re.fullmatch(r"memchat-export-\d{4}-\d{2}-\d{2}\.json", download.suggested_filename)
    exported = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert exported["user"]["email"] == account.email
    assert [agent["name"] for agent in exported["agents"]] == ["小雨"]
    text = json.dumps(exported, ensure_ascii=False)
    assert "记住，我不喜欢被催" in text


def test_delete_the_account_after_typing_its_email(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    create_agent(server, account.token, "小雨")
    page.goto("/account")
    form = page.get_by_test_id("delete-account-form")
    button = form.get_by_test_id("delete-account")
    expect(button).to_be_disabled()
    form.locator("input[name=confirmEmail]").fill("someone-else@example.com")
    expect(button).to_be_disabled()
    form.locator("input[name=confirmEmail]").fill(account.email.upper())
    expect(button).to_be_enabled()
    button.click()

    expect(page).to_have_url(re.compile(r"/login$"))
    assert page.evaluate("localStorage.getItem('memchat.token')") is None
    assert login_status(server, account.email, PASSWORD) == 401
    with server.api(account.token) as api:
        assert api.get("/api/agents").status_code == 401
