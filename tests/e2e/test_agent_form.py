"""The profile form says what each field takes: 心动值 is a number from 0 to 100, 最近活跃 free text."""

import re
from typing import Any

import pytest

from tests.e2e.conftest import Account, Server

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect


def agents(server: Server, token: str) -> list[dict[str, Any]]:
    with server.api(token) as api:
        response = api.get("/api/agents")
        response.raise_for_status()
        found: list[dict[str, Any]] = response.json()["agents"]
        return found


def test_hints_and_a_chemistry_out_of_range(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    page.goto("/agents/new")
    expect(page.get_by_test_id("hint-chemistry")).to_have_text("0–100 的数字，例如 78")
    expect(page.get_by_test_id("hint-lastActive")).to_have_text("自由文本，例如：3 分钟前、昨晚 22:10")
    # The help speaks of the form, not of the server's settings (a user cannot change those).
    expect(page.get_by_text("都可以留空。")).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("MEMCHAT_")
    chemistry = page.locator("input[name='profile.chemistry']")
    expect(chemistry).to_have_attribute("aria-describedby", "hint-chemistry")
    expect(chemistry).to_have_attribute("inputmode", "numeric")

    page.locator("input[name=name]").fill("小雨")
    page.locator("input[name='profile.lastActive']").fill("昨晚 22:10")
    for bad in ("120", "七十", "-1"):
        chemistry.fill(bad)
        page.get_by_role("button", name="创建").click()
        assert chemistry.evaluate("el => el.validity.patternMismatch") is True
        expect(page).to_have_url(re.compile(r"/agents/new$"))
    assert agents(server, account.token) == []

    chemistry.fill("78")
    page.get_by_role("button", name="创建").click()
    expect(page).to_have_url(re.compile(r"/agents/[^/]+/chat$"))
    [agent] = agents(server, account.token)
    assert agent["profile"]["chemistry"] == "78"
    assert agent["profile"]["lastActive"] == "昨晚 22:10"
