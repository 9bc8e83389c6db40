"""The API keys page: create a key (shown once, and it works as a bearer token), see it listed by
its prefix, revoke it (refused at once)."""

import re
from typing import Any

import pytest

from tests.e2e.conftest import Account, Server
from tests.e2e.support import create_agent

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect


def test_create_use_and_revoke_a_key(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    create_agent(server, account.token, "小雨")
    page.goto("/")
    page.get_by_test_id("nav-keys").click()
    expect(page).to_have_url(re.compile(r"/keys$"))
    expect(page.get_by_text("还没有 API 密钥。")).to_be_visible()

    page.locator("input[name=keyName]").fill("我的脚本")
    page.get_by_test_id("key-create").click()
    key = page.get_by_test_id("new-key-value").inner_text().strip()
    assert key
    row = page.get_by_test_id("key-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("我的脚本")
    prefix = row.get_by_test_id("key-prefix").inner_text().rstrip("…")
    assert key.startswith(prefix)
    assert key not in row.inner_text()

    # The key works where a login token does.
    with server.api(key) as api:
        response = api.get("/api/agents")
        assert response.status_code == 200
        assert [agent["name"] for agent in response.json()["agents"]] == ["小雨"]

    # Shown once: after a reload only the prefix is left.
    page.reload()
    expect(page.get_by_test_id("key-row")).to_have_count(1)
    expect(page.get_by_test_id("new-key")).to_have_count(0)
    assert key not in page.locator("main").inner_text()

    # Revoking asks first, then the key is refused at once.
    row.get_by_test_id("key-revoke").click()
    expect(row).to_contain_text("吊销「我的脚本」？")
    row.get_by_test_id("key-revoke-confirm").click()
    expect(page.get_by_test_id("key-row")).to_have_count(0)
    expect(page.get_by_text("还没有 API 密钥。")).to_be_visible()
    with server.api(key) as api:
        assert api.get("/api/agents").status_code == 401


def test_a_key_name_is_required(logged_in: Any) -> None:
    page = logged_in
    page.goto("/keys")
    expect(page.get_by_test_id("key-create")).to_be_disabled()
    page.locator("input[name=keyName]").fill("   ")
    expect(page.get_by_test_id("key-create")).to_be_disabled()
