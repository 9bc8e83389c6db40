"""The chat console: markdown replies, copy buttons, the phone layout, live tabs, conversations, edits, demo banner."""

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import (
    Account,
    Screenshots,
    Server,
    Upstream,
    serve_memchat,
)
from tests.e2e.support import chat_turn, create_agent, history, message_items, open_chat, send_message, wait_for

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

PHONE = {"width": 390, "height": 844}

MARKDOWN_REPLY = [
    "# 周末计划\n\n**重点**：带上`水壶`，记得**早点",
    "睡**。\n\n```python\nprint('出发')\n",
    "```\n\n| 时间 | 地点 |\n|---|---|\n| 8:00 | 山脚 |\n\n",
    '<script>window.pwned = 1</script>\n\n<img src=x onerror="window.pwned = 2">\n\n',
    "[点我](javascript:window.pwned=3) 或看 [文档](https://example.com/docs)",
]


def _assistant(page: Any) -> Any:
    return page.locator("[data-testid=message][data-role=assistant]")


def _log_in(page: Any, token: str) -> None:
    page.goto("/login")
    page.evaluate("token => localStorage.setItem('memchat.token', token)", token)


def _conversation_texts(server: Server, token: str, conversation_id: str) -> list[str]:
    with server.api(token) as api:
        response = api.get(f"/api/conversations/{conversation_id}/messages")
        response.raise_for_status()
        return [m["parts"][0]["text"] for m in response.json()["messages"]]


def _box(locator: Any) -> dict[str, float]:
    box: dict[str, float] = locator.bounding_box()
    assert box is not None
    return box


def test_a_reply_renders_as_markdown_while_it_streams_with_copy_buttons(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, screenshots: Screenshots
) -> None:
    page = logged_in
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    # A remote model answers here: no demo banner.
    expect(page.get_by_test_id("demo-banner")).to_have_count(0)

    upstream.script({"deltas": MARKDOWN_REPLY, "holdAfter": 1})
    send_message(page, "周末去爬山吗")
    reply = _assistant(page).last.get_by_test_id("message-text")
    # Mid-stream (one delta out, cut inside a bold): already a heading, bold and inline code, and
    # the half-written bold renders as bold, not as raw asterisks.
    expect(reply.locator("h1")).to_have_text("周末计划")
    expect(reply.locator("strong")).to_have_text(["重点", "早点"])
    expect(reply.locator("p code")).to_have_text("水壶")
    expect(reply).not_to_contain_text("**")
    expect(_assistant(page).last).to_have_attribute("data-status", "streaming")

    upstream.release()
    expect(page.get_by_test_id("send")).to_be_visible()
    expect(reply.locator("strong")).to_have_text(["重点", "早点睡"])
    expect(reply.locator("pre code.language-python")).to_have_text("print('出发')")
    expect(reply.locator("pre code.hljs [class^=hljs-]").first).to_be_visible()
    expect(reply).not_to_contain_text("```")
    expect(reply.locator("table td").first).to_have_text("8:00")
    expect(reply.locator("th").nth(1)).to_have_text("地点")
    # Raw HTML is never parsed and a javascript: link loses its URL: nothing ran.
    expect(reply.locator("a", has_text="点我")).to_be_visible()
    assert reply.locator("script, img").count() == 0
    assert reply.locator("a", has_text="点我").get_attribute("href") in (None, "")
    assert reply.locator("a", has_text="文档").get_attribute("href") == "https://example.com/docs"
    assert reply.locator("a", has_text="文档").get_attribute("target") == "_blank"
    assert page.evaluate("window.pwned") is None
    # The stored reply rendered the same way (the server's ids now).
    stored = history(server, account.token, agent_id)
    expect(_assistant(page).last).to_have_attribute("data-message-id", stored[1]["id"])
    expect(reply.locator("h1")).to_have_text("周末计划")
    # A first, short chat: no "没有更早的消息了" (only after paging back to the start).
    expect(page.get_by_test_id("no-earlier")).to_have_count(0)
    expect(page.get_by_text("没有更早的消息了")).to_have_count(0)

    code_block = reply.get_by_test_id("code-block")
    code_block.get_by_test_id("copy-code").click()
    expect(code_block.get_by_test_id("copy-code")).to_have_text("已复制")
    assert page.evaluate("navigator.clipboard.readText()") == "print('出发')"
    _assistant(page).last.get_by_test_id("copy-reply").click()
    assert page.evaluate("navigator.clipboard.readText()") == "".join(MARKDOWN_REPLY)

    # 1280 px: the chat fills the window below the top bar, the message list is what scrolls,
    # the side panel is a column beside it, no drawer button.
    expect(page.get_by_test_id("side-panel")).to_be_visible()
    expect(page.get_by_test_id("open-panel")).to_be_hidden()
    assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight")
    assert page.get_by_test_id("composer").get_attribute("placeholder") == "输入消息，Enter 发送，Shift+Enter 换行"
    screenshots.take(page, "chat-1280")


def test_on_a_phone_the_chat_is_full_height_with_the_panel_as_a_drawer(
    browser: Any, server: Server, account: Account, upstream: Upstream, screenshots: Screenshots
) -> None:
    agent_id = create_agent(server, account.token, "小雨", profile={"relationship": "暧昧期"})
    upstream.script({"text": "好呀，**周六**早上八点山脚见。"}, {"text": "带上水和零食。"})
    chat_turn(server, account.token, agent_id, "我喜欢爬山，周末一起去吗")
    chat_turn(server, account.token, agent_id, "要带什么")
    context = browser.new_context(
        base_url=server.base_url,
        viewport=PHONE,
        is_mobile=True,
        has_touch=True,
        locale="zh-CN",
        # The drawer slides in; measured without the slide, it is where it ends up.
        reduced_motion="reduce",
    )
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        _log_in(page, account.token)
        open_chat(page, agent_id)
        expect(message_items(page)).to_have_count(4)
        composer = page.get_by_test_id("composer")

        # Full height: the page itself does not scroll, the chat ends at the bottom of the screen.
        assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight")
        chat_main = _box(page.locator(".chat-main"))
        assert abs(chat_main["y"] + chat_main["height"] - PHONE["height"]) <= 1
        assert chat_main["width"] == PHONE["width"]
        # The composer: a full-width textarea with the buttons under it, no "Enter 发送" hint.
        assert composer.get_attribute("placeholder") == "输入消息"
        field = _box(composer)
        assert field["width"] >= PHONE["width"] - 2 * 16
        assert _box(page.get_by_test_id("send"))["y"] >= field["y"] + field["height"]
        assert _box(page.get_by_test_id("regenerate"))["y"] >= field["y"] + field["height"]
        # On a phone Enter is a new line; the button sends.
        composer.fill("第一行")
        composer.press("End")
        composer.press("Enter")
        composer.type("第二行")
        expect(composer).to_have_value("第一行\n第二行")
        expect(message_items(page)).to_have_count(4)
        composer.fill("")
        # The reply's markdown renders here too.
        expect(_assistant(page).first.locator("strong")).to_have_text("周六")
        screenshots.take(page, "chat-390")

        # The side panel is a drawer: hidden until asked for, then over the chat, closed again.
        panel = page.get_by_test_id("side-panel")
        expect(panel).to_be_hidden()
        page.get_by_test_id("open-panel").click()
        expect(panel).to_be_visible()
        expect(panel.get_by_test_id("message-count")).to_have_text("4")
        expect(panel.get_by_test_id("conversation")).to_have_count(1)
        expect(panel.get_by_test_id("panel-memory").first).to_contain_text("爬山")
        drawer = _box(panel)
        assert drawer["x"] + drawer["width"] <= PHONE["width"] + 1
        assert drawer["height"] >= PHONE["height"] - 1
        screenshots.take(page, "chat-390-panel")
        panel.get_by_test_id("close-panel").click()
        expect(panel).to_be_hidden()

        upstream.script({"text": "收到。"})
        send_message(page, "好的")
        expect(message_items(page).last).to_contain_text("收到。")
        expect(message_items(page)).to_have_count(6)
    finally:
        context.close()


def test_open_tabs_of_a_conversation_follow_each_others_turns(
    logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    first = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(first, agent_id)
    second = first.context.new_page()
    open_chat(second, agent_id)

    upstream.script({"text": "这是第一个标签页里的回复。"})
    send_message(first, "我在第一个标签页")
    # No focus change, no reload: the second tab follows.
    expect(message_items(second)).to_have_count(2)
    expect(message_items(second).last).to_contain_text("这是第一个标签页里的回复。")
    expect(second.get_by_test_id("message-count")).to_have_text("2")

    # The second tab follows the first tab's reply while it streams (tests/e2e/test_live_tabs.py),
    # then sends its own.
    upstream.script({"deltas": ["第一个", "慢慢说完"], "holdAfter": 1}, {"text": "第二个标签页的回复"})
    send_message(first, "第一个标签页又说")
    expect(_assistant(first).last).to_contain_text("第一个")
    expect(_assistant(second).last).to_contain_text("第一个")
    upstream.release()
    expect(_assistant(second).last).to_contain_text("第一个慢慢说完")
    send_message(second, "第二个标签页也说")
    expect(_assistant(second).last).to_contain_text("第二个标签页的回复")

    stored: list[dict[str, Any]] = []

    def server_has_both_replies() -> bool:
        stored[:] = history(server, account.token, agent_id)
        return len(stored) == 6

    wait_for(server_has_both_replies, "both replies to be stored")
    # Each tab ends with the server's six messages, in the server's order, with the server's ids.
    for page in (first, second):
        expect(message_items(page)).to_have_count(6)
        for index, message in enumerate(stored):
            expect(message_items(page).nth(index)).to_have_attribute("data-message-id", message["id"])
        expect(page.get_by_test_id("message-count")).to_have_text("6")


def test_conversations_per_agent_new_switch_rename_delete(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, screenshots: Screenshots
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    upstream.script({"text": "猫很可爱。"})
    send_message(page, "我喜欢猫")
    expect(message_items(page).last).to_contain_text("猫很可爱。")
    expect(page.get_by_test_id("panel-memory").first).to_contain_text("我喜欢猫")

    page.get_by_test_id("new-conversation").click()
    expect(page).to_have_url(re.compile(rf"/agents/{agent_id}/chat\?conversation=[0-9a-f-]+$"))
    expect(page.get_by_text("还没有消息，打个招呼吧。")).to_be_visible()
    conversation_id = page.evaluate("new URL(location.href).searchParams.get('conversation')")
    assert conversation_id
    expect(page.get_by_test_id("message-count")).to_have_text("0")
    # Memories belong to the agent: the new conversation shows them too.
    expect(page.get_by_test_id("panel-memory").first).to_contain_text("我喜欢猫")

    upstream.script({"text": "好，周末去爬山。"})
    with page.expect_request("**/api/ui/chat") as sent:
        send_message(page, "周末去爬山")
    body = sent.value.post_data_json
    assert body["conversationId"] == conversation_id
    assert body["id"] == conversation_id
    expect(message_items(page).last).to_contain_text("好，周末去爬山。")
    expect(page.get_by_test_id("message-count")).to_have_text("2")
    expect(page.get_by_test_id("summary")).to_contain_text("周末去爬山")
    expect(page.get_by_test_id("summary")).not_to_contain_text("我喜欢猫")
    # The other conversation's memory went into this prompt too.
    assert "我喜欢猫" in upstream.requests()[-1]["messages"][0]["content"]

    items = page.get_by_test_id("conversation")
    expect(items).to_have_count(2)
    expect(items.first.get_by_test_id("conversation-name")).to_contain_text("未命名对话 · ")
    # Each with its own summary, in the list too.
    expect(items.first.get_by_test_id("conversation-summary")).to_contain_text("周末去爬山")
    expect(items.last.get_by_test_id("conversation-summary")).to_contain_text("我喜欢猫")
    expect(items.first).to_have_attribute("aria-current", "page")
    for item in (items.first, items.last):
        expect(item.get_by_test_id("conversation-count")).to_have_text("2 条消息")

    items.first.get_by_test_id("conversation-rename").click()
    page.get_by_test_id("conversation-title-input").fill("爬山计划")
    page.get_by_test_id("conversation-title-save").click()
    expect(items.first.get_by_test_id("conversation-name")).to_have_text("爬山计划")
    with server.api(account.token) as api:
        assert api.get(f"/api/conversations/{conversation_id}").json()["title"] == "爬山计划"
    screenshots.take(page, "chat-conversations-1280")

    # Back to the default conversation: its own messages, summary and count.
    page.locator("[data-testid=conversation][data-default=true] .conversation-link").click()
    expect(page).to_have_url(f"{server.base_url}/agents/{agent_id}/chat")
    expect(message_items(page)).to_have_count(2)
    expect(message_items(page).first).to_contain_text("我喜欢猫")
    expect(page.get_by_test_id("summary")).to_contain_text("我喜欢猫")
    expect(page.get_by_test_id("summary")).not_to_contain_text("周末去爬山")

    # Delete the other one (after a confirmation): gone with its messages, the memory stays. A tab
    # that showed it goes back to the default conversation.
    second = page.context.new_page()
    open_chat(second, agent_id, f"?conversation={conversation_id}")
    expect(message_items(second).first).to_contain_text("周末去爬山")
    other = page.locator(f"[data-testid=conversation][data-conversation-id='{conversation_id}']")
    other.get_by_test_id("conversation-delete").click()
    other.get_by_test_id("conversation-delete-confirm").click()
    expect(page.get_by_test_id("conversation")).to_have_count(1)
    expect(second).to_have_url(f"{server.base_url}/agents/{agent_id}/chat")
    expect(message_items(second).first).to_contain_text("我喜欢猫")
    with server.api(account.token) as api:
        assert api.get(f"/api/conversations/{conversation_id}").status_code == 404
    expect(page.get_by_test_id("panel-memory").first).to_contain_text("我喜欢猫")
    default_id = page.get_by_test_id("conversation").get_attribute("data-conversation-id")
    assert _conversation_texts(server, account.token, default_id) == ["我喜欢猫", "猫很可爱。"]


def test_edit_a_sent_message_and_answer_it_again(
    logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    upstream.script({"text": "狗很忠诚。"}, {"text": "第二个回复"})
    send_message(page, "我养了一只狗")
    expect(message_items(page).last).to_contain_text("狗很忠诚。")
    send_message(page, "它叫旺财")
    expect(message_items(page).last).to_contain_text("第二个回复")
    first_id = history(server, account.token, agent_id)[0]["id"]
    expect(message_items(page).first).to_have_attribute("data-message-id", first_id)

    first = message_items(page).first
    first.get_by_test_id("edit-message").click()
    expect(first.get_by_test_id("edit-text")).to_have_value("我养了一只狗")
    first.get_by_test_id("edit-text").fill("我养了一只猫")
    upstream.script({"text": "猫很独立。"})
    with page.expect_request("**/api/ui/chat") as sent:
        first.get_by_test_id("edit-save").click()
    body = sent.value.post_data_json
    assert body["messageId"] == first_id
    assert body["trigger"] == "submit-message"
    assert [m["parts"][0]["text"] for m in body["messages"]] == ["我养了一只猫"]

    # The edited message and everything after it are replaced, here and on the server.
    expect(message_items(page)).to_have_count(2)
    expect(message_items(page).first).to_contain_text("我养了一只猫")
    expect(message_items(page).last).to_contain_text("猫很独立。")
    expect(page.get_by_test_id("message-count")).to_have_text("2")
    stored = history(server, account.token, agent_id)
    assert [(m["role"], m["parts"][0]["text"]) for m in stored] == [
        ("user", "我养了一只猫"),
        ("assistant", "猫很独立。"),
    ]
    prompt = upstream.requests()[-1]["messages"]
    assert prompt[-1] == {"role": "user", "content": "我养了一只猫"}
    assert not any("旺财" in m["content"] or "狗" in m["content"] for m in prompt[1:])
    page.reload()
    expect(message_items(page)).to_have_count(2)
    expect(message_items(page).first).to_contain_text("我养了一只猫")


@pytest.fixture
def demo_server(e2e_dir: Path) -> Iterator[str]:
    """`memchat serve` with no LLM configured: the embedded demo model answers."""
    pytest.importorskip("xllamacpp")
    with serve_memchat(e2e_dir / f"demo-{uuid.uuid4().hex[:6]}", {"MEMCHAT_LOCAL_N_THREADS": "1"}) as base_url:
        yield base_url


def test_a_banner_says_when_the_demo_model_answers(browser: Any, demo_server: str) -> None:
    assert httpx.get(f"{demo_server}/healthz").json()["llm"].startswith("local:")
    response = httpx.post(
        f"{demo_server}/api/auth/signup", json={"email": "demo@example.com", "password": "demo-password-1"}
    )
    token = response.json()["token"]
    agent = httpx.post(f"{demo_server}/api/agents", json={"name": "演示"}, headers={"Authorization": f"Bearer {token}"})
    context = browser.new_context(base_url=demo_server, viewport={"width": 1280, "height": 800}, locale="zh-CN")
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        _log_in(page, token)
        open_chat(page, agent.json()["id"])
        banner = page.get_by_test_id("demo-banner")
        expect(banner).to_contain_text("内置演示模型")
        banner.get_by_text("如何配置真实模型").click()
        expect(banner).to_contain_text("MEMCHAT_LLM_BASE_URL")
        expect(banner).to_contain_text("docs/providers.md")
    finally:
        context.close()


def test_a_memory_from_the_stream_shows_in_the_side_panel(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, screenshots: Screenshots
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    upstream.script({"text": "记住了，不催你。"})
    send_message(page, "以后不要催我回消息")
    expect(message_items(page).last).to_contain_text("记住了，不催你。")
    # The turn's data-memory part put it there (data-live), with its type and importance.
    live = page.locator("[data-testid=panel-memory][data-live=true]")
    expect(live).to_have_count(1)
    expect(live).to_contain_text("以后不要催我回消息")
    expect(live).to_contain_text("边界")
    # data-conversation: the stored summary and count.
    expect(page.get_by_test_id("message-count")).to_have_text("2")
    expect(page.get_by_test_id("summary")).to_contain_text("以后不要催我回消息")
    with server.api(account.token) as api:
        stored = api.get(f"/api/agents/{agent_id}/memories").json()["memories"]
    assert [m["content"] for m in stored] == ["以后不要催我回消息"]


def test_a_reply_streaming_during_a_reload_is_resumed(
    logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(page, agent_id)
    upstream.script({"deltas": ["第一段，", "第二段。"], "holdAfter": 1})
    send_message(page, "讲个故事")
    expect(_assistant(page).last).to_contain_text("第一段，")

    with page.expect_request(f"**/api/ui/chat/{agent_id}/stream") as resumed:
        page.reload()
    assert resumed.value.method == "GET"
    # From the stream's first part: the text so far, once, still streaming.
    reply = _assistant(page).last
    expect(reply.get_by_test_id("message-text")).to_have_text("第一段，")
    expect(reply).to_have_attribute("data-status", "streaming")
    expect(page.get_by_test_id("stop")).to_be_visible()
    upstream.release()
    expect(reply.get_by_test_id("message-text")).to_have_text("第一段，第二段。")
    expect(page.get_by_test_id("send")).to_be_visible()
    stored = history(server, account.token, agent_id)
    expect(message_items(page)).to_have_count(2)
    expect(_assistant(page).last).to_have_attribute("data-message-id", stored[1]["id"])
    assert [m["parts"][0]["text"] for m in stored] == ["讲个故事", "第一段，第二段。"]
