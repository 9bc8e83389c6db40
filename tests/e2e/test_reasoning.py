"""A reasoning model's thinking in the console: open while it streams, folded once the reply comes,
there again after a reload, and it fits a phone's screen."""

from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server, Upstream
from tests.e2e.support import create_agent, open_chat, send_message
from tests.e2e.test_mobile import LAYOUT_PROBLEMS

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.mark.parametrize("width", [1280, 390])
def test_the_thinking_is_open_while_it_streams_then_folded(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, screenshots: Screenshots, width: int
) -> None:
    page = logged_in
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    upstream.script(
        {
            "reasoning": ["用户在打招呼，", "先回应，再问问近况。"],
            "deltas": ["你好呀", "，今天过得怎么样？"],
            "holdAfter": 2,  # both pieces of thinking are out, the reply is held back
        }
    )
    send_message(page, "你好")
    assistant = page.locator("[data-testid=message][data-role=assistant]").last
    thinking = assistant.get_by_test_id("reasoning")
    expect(thinking).to_have_attribute("open", "")
    expect(thinking).to_contain_text("用户在打招呼，先回应，再问问近况。")
    expect(thinking.locator("summary")).to_have_text("思考过程")
    screenshots.take(page, f"chat-reasoning-{width}")

    upstream.release()
    expect(assistant.get_by_test_id("message-text")).to_have_text("你好呀，今天过得怎么样？")
    expect(page.get_by_test_id("send")).to_be_visible()
    expect(thinking).not_to_have_attribute("open", "")  # folded once the reply is there
    assert "用户在打招呼" not in assistant.get_by_test_id("message-text").inner_text()
    problems = page.evaluate(LAYOUT_PROBLEMS)
    assert problems["scroll"] <= 0, f"the chat at {width} px scrolls sideways"

    # the stored reply keeps its thinking: after a reload it is there, folded, and opens on a click
    page.reload()
    stored = page.locator("[data-testid=message][data-role=assistant]").last.get_by_test_id("reasoning")
    expect(stored).not_to_have_attribute("open", "")
    stored.locator("summary").click()
    expect(stored).to_have_attribute("open", "")
    expect(stored).to_contain_text("先回应，再问问近况。")
