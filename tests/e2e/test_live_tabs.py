"""Every open tab, and a phone, follows a reply while it streams; no 重试 is offered for it, and a retry
that meets it (409) follows it instead of standing as an error."""

from datetime import datetime
from typing import Any

import pytest

from tests.e2e.conftest import Account, Server, Upstream
from tests.e2e.support import create_agent, history, message_items, open_chat, send_message, signed_in_page, wait_for

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

HELD = {"deltas": ["第一段，", "第二段。"], "holdAfter": 1}
PHONE = {"width": 390, "height": 844}


def _replies(page: Any) -> Any:
    return page.locator("[data-testid=message][data-role=assistant]")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_second_tab_shows_the_reply_as_it_streams(
    logged_in: Any, server: Server, account: Account, upstream: Upstream, width: int
) -> None:
    first = logged_in
    first.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(first, agent_id)
    second = first.context.new_page()
    second.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
    open_chat(second, agent_id)

    upstream.script(HELD)
    send_message(first, "你在吗")
    # The second tab shows the user's message and the reply's first part while the upstream holds
    # the rest: it follows the live stream, not only the stored turn.
    expect(message_items(second)).to_have_count(2)
    expect(message_items(second).first).to_contain_text("你在吗")
    live = _replies(second).last
    expect(live).to_have_attribute("data-status", "streaming")
    expect(live.get_by_test_id("message-text")).to_have_text("第一段，")
    # No retry for a turn that is streaming; it can be stopped from here as from the first tab.
    expect(second.get_by_test_id("regenerate")).to_have_count(0)
    expect(second.get_by_test_id("stop")).to_be_visible()

    upstream.release()
    stored: list[dict[str, Any]] = []

    def reply_stored() -> bool:
        stored[:] = history(server, account.token, agent_id)
        return len(stored) == 2 and stored[1]["status"] == "completed"

    wait_for(reply_stored, "the reply to be stored")
    for page in (first, second):
        expect(message_items(page)).to_have_count(2)
        expect(_replies(page).last.get_by_test_id("message-text")).to_have_text("第一段，第二段。")
        expect(_replies(page).last).to_have_attribute("data-message-id", stored[1]["id"])
        expect(page.get_by_test_id("regenerate")).to_have_text("重新生成")
        expect(page.get_by_test_id("error-banner")).to_have_count(0)
    assert second.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def test_a_page_whose_first_look_meets_a_turn_started_since_shows_the_message_it_answers(
    browser: Any, logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    """The phone loads the chat while it is empty; its look for a live reply reaches the server only
    after the desktop's message started a turn (a slow phone or network), so the reply it follows
    answers a message its page never had: it fetches that message and shows the two in order."""
    desktop = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(desktop, agent_id)
    with signed_in_page(browser, server, account.token) as phone:
        phone.set_viewport_size(PHONE)
        held: list[Any] = []
        phone.route("**/api/ui/chat/*/stream", lambda route: held.append(route) if not held else route.continue_())
        with phone.expect_request(lambda request: request.url.endswith("/stream")):
            open_chat(phone, agent_id)
        expect(phone.get_by_text("还没有消息，打个招呼吧。")).to_be_visible()

        upstream.script(HELD)
        send_message(desktop, "你在吗")
        expect(_replies(desktop).last.get_by_test_id("message-text")).to_have_text("第一段，")
        assert len(held) == 1
        held[0].continue_()  # the look answers now: with the reply that streams

        expect(message_items(phone)).to_have_count(2)
        expect(message_items(phone).first).to_have_attribute("data-role", "user")
        expect(message_items(phone).first).to_contain_text("你在吗")
        live = _replies(phone).last
        expect(live).to_have_attribute("data-status", "streaming")
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，")

        upstream.release()
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，第二段。")
        expect(live).to_have_attribute("data-status", "completed")
        stored = history(server, account.token, agent_id)
        assert [m["role"] for m in stored] == ["user", "assistant"]
        for page in (desktop, phone):
            expect(message_items(page)).to_have_count(2)
            for item, message in zip(message_items(page).all(), stored, strict=True):
                expect(item).to_have_attribute("data-message-id", message["id"])


def test_a_phone_follows_the_reply_and_its_retry_does_not_stand_as_an_error(
    browser: Any, logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    desktop = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(desktop, agent_id)
    upstream.script({"status": 500})
    send_message(desktop, "这条先失败")
    expect(desktop.get_by_test_id("regenerate")).to_have_text("重试")

    with signed_in_page(browser, server, account.token) as phone:
        # Another device: no channel between it and the desktop's tabs.
        phone.set_viewport_size(PHONE)
        # The phone's clock stands still from before its chat opens until its user taps 重试, so its
        # idle check (every few seconds) never runs before the tap, however slow the machine: the
        # tap meets the desktop's turn. (Paused once the chat was open, a check due by then ran as
        # the pause landed, and under load its request could reach the server after the desktop's
        # retry was stored: the phone then followed that reply before the tap, and 重试 went away.)
        phone.clock.install()
        phone.clock.pause_at(datetime.fromtimestamp(phone.evaluate("Date.now()") / 1000 + 1))
        # Its first look for a live reply (the resume request) is answered, nothing streaming, before the
        # desktop retries: a look that reached the server later, under load, followed the retry instead.
        with phone.expect_response(lambda response: response.url.endswith("/stream")) as look:
            open_chat(phone, agent_id)
        assert look.value.status == 204
        expect(message_items(phone)).to_have_count(1)
        expect(phone.get_by_test_id("regenerate")).to_have_text("重试")

        upstream.script(HELD)
        desktop.get_by_test_id("regenerate").click()
        expect(_replies(desktop).last.get_by_test_id("message-text")).to_have_text("第一段，")

        # The phone still offers 重试 (it was not told); using it meets the turn that streams (409)
        # and the phone follows that reply instead of showing the error.
        phone.get_by_test_id("regenerate").click()
        phone.clock.resume()
        live = _replies(phone).last
        expect(live).to_have_attribute("data-status", "streaming")
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，")
        expect(phone.get_by_test_id("regenerate")).to_have_count(0)

        upstream.release()
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，第二段。")
        expect(phone.get_by_test_id("regenerate")).to_have_text("重新生成")
        expect(phone.get_by_test_id("error-banner")).to_have_count(0)
        # One answer: the phone's retry started no turn of its own.
        stored = history(server, account.token, agent_id)
        assert [(m["role"], m["parts"][-1]["text"]) for m in stored] == [
            ("user", "这条先失败"),
            ("assistant", "第一段，第二段。"),
        ]

        # A turn started elsewhere while the phone was in the background: coming back shows it live.
        upstream.reset()  # holds again
        upstream.script({"deltas": ["又一段，", "说完了。"], "holdAfter": 1})
        send_message(desktop, "再来一段")
        expect(_replies(desktop).last.get_by_test_id("message-text")).to_have_text("又一段，")
        phone.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        expect(message_items(phone)).to_have_count(4)
        expect(_replies(phone).last).to_have_attribute("data-status", "streaming")
        expect(_replies(phone).last.get_by_test_id("message-text")).to_have_text("又一段，")
        expect(phone.get_by_test_id("regenerate")).to_have_count(0)
        upstream.release()
        expect(_replies(phone).last.get_by_test_id("message-text")).to_have_text("又一段，说完了。")
        expect(_replies(phone).last).to_have_attribute("data-status", "completed")
        assert phone.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def test_a_phone_on_screen_follows_a_turn_another_device_starts(
    browser: Any, logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    desktop = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(desktop, agent_id)
    with signed_in_page(browser, server, account.token) as phone:
        phone.set_viewport_size(PHONE)
        open_chat(phone, agent_id)
        expect(phone.get_by_text("还没有消息，打个招呼吧。")).to_be_visible()
        upstream.script(HELD)
        send_message(desktop, "从电脑上发的")
        expect(_replies(desktop).last.get_by_test_id("message-text")).to_have_text("第一段，")
        # No channel reaches the phone and it stays on screen: its idle check finds the new message
        # and it follows the reply live.
        live = _replies(phone).last
        expect(live).to_have_attribute("data-status", "streaming", timeout=15_000)
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，")
        expect(phone.get_by_test_id("regenerate")).to_have_count(0)
        upstream.release()
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，第二段。")
        expect(live).to_have_attribute("data-status", "completed")


def test_a_page_that_missed_the_live_reply_follows_it_once_it_sees_the_turn_is_being_answered(
    browser: Any, logged_in: Any, server: Server, account: Account, upstream: Upstream
) -> None:
    """The phone opens the chat while the desktop's reply streams, and its look for a live reply
    finds none (as when it asks a moment before the stream can be followed): the history says the
    user's message is being answered (replyState pending), so its idle check follows the reply."""
    desktop = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    open_chat(desktop, agent_id)
    upstream.script(HELD)
    send_message(desktop, "从电脑上发的")
    expect(_replies(desktop).last.get_by_test_id("message-text")).to_have_text("第一段，")
    with signed_in_page(browser, server, account.token) as phone:
        phone.set_viewport_size(PHONE)
        looks: list[str] = []

        def first_look_finds_nothing(route: Any) -> None:
            looks.append(route.request.url)
            if len(looks) == 1:
                route.fulfill(status=204)
            else:
                route.continue_()

        phone.route("**/api/ui/chat/*/stream", first_look_finds_nothing)
        open_chat(phone, agent_id)
        expect(message_items(phone)).to_have_count(1)
        live = _replies(phone).last
        expect(live).to_have_attribute("data-status", "streaming", timeout=15_000)
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，")
        assert len(looks) >= 2
        upstream.release()
        expect(live.get_by_test_id("message-text")).to_have_text("第一段，第二段。")
        expect(live).to_have_attribute("data-status", "completed")
