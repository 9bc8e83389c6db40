"""Pictures in the console: attached (button, drop, paste), shown as thumbnails in the composer, sent to
the upstream as an image_url part when the model reads pictures (else the prompt marks [图片] and
the user is told once), shown in history after a reload and opened full size, at 1280 and 390 px."""

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, Upstream, serve_memchat, upstream_env
from tests.e2e.support import create_agent, open_chat, signed_in_page
from tests.e2e.test_mobile import LAYOUT_PROBLEMS
from tests.files.pictures import noisy_png, png

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

PHOTO = png(24, 16, (30, 140, 220))
PHOTO_URL = f"data:image/png;base64,{base64.b64encode(PHOTO).decode()}"
# a drop of a file onto the composer, as a browser makes it from the desktop
DROP = """([selector, b64, name, type]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const target = document.querySelector(selector);
  for (const kind of ["dragenter", "dragover", "drop"]) {
    target.dispatchEvent(new DragEvent(kind, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }
}"""
# a picture pasted into the message field (a screenshot from the clipboard)
PASTE = """([b64, name, type]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const field = document.querySelector("[data-testid=composer]");
  field.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
}"""
LOADED = "img => img.complete && img.naturalWidth > 0"


@pytest.fixture(scope="module")
def images_server(e2e_dir: Path, upstream: Upstream) -> Iterator[Server]:
    env = {**upstream_env(upstream), "MEMCHAT_LLM_IMAGES": "true"}
    with serve_memchat(e2e_dir / f"images-{uuid.uuid4().hex[:6]}", env) as base_url:
        yield Server(base_url=base_url)


def _signup(server: Server) -> str:
    with server.api() as api:
        email = f"pic-{uuid.uuid4().hex[:8]}@example.com"
        response = api.post("/api/auth/signup", json={"email": email, "password": "password-pic-1"})
        response.raise_for_status()
        token: str = response.json()["token"]
        return token


@pytest.mark.parametrize("width", [1280, 390])
def test_an_attached_picture_goes_upstream_as_image_url_and_stays_in_history(
    browser: Any, images_server: Server, upstream: Upstream, width: int
) -> None:
    upstream.reset()
    token = _signup(images_server)
    agent_id = create_agent(images_server, token, "小雨")
    with signed_in_page(browser, images_server, token) as page:
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
        open_chat(page, agent_id)
        upstream.script({"deltas": ["好蓝的", "一张图。"]})
        page.get_by_test_id("attach-input").set_input_files(
            {"name": "sky.png", "mimeType": "image/png", "buffer": PHOTO}
        )
        expect(page.get_by_test_id("composer-picture")).to_have_count(1)
        expect(page.get_by_test_id("pictures-not-seen")).to_have_count(0)  # this model reads pictures
        page.get_by_test_id("composer").fill("这张天空好看吗")
        page.get_by_test_id("send").click()

        assistant = page.locator("[data-testid=message][data-role=assistant]").last
        expect(assistant.get_by_test_id("message-text")).to_have_text("好蓝的一张图。")
        expect(page.get_by_test_id("composer-picture")).to_have_count(0)
        request = [r for r in upstream.requests() if "messages" in r][-1]
        assert request["messages"][-1]["content"] == [
            {"type": "text", "text": "这张天空好看吗"},
            {"type": "image_url", "image_url": {"url": PHOTO_URL}},
        ]

        # after a reload the picture comes from the server (GET /api/files/{id}, with the token)
        page.reload()
        user = page.locator("[data-testid=message][data-role=user]").last
        picture = user.get_by_test_id("message-picture")
        expect(picture).to_have_attribute("data-media-type", "image/png")
        image = picture.locator("img")
        expect(image).to_be_visible()
        page.wait_for_function(f"() => ({LOADED})(document.querySelector('[data-testid=message-picture] img'))")
        assert image.evaluate("img => img.naturalWidth") == 24
        picture.click()
        full = page.get_by_test_id("picture-full")
        expect(full).to_be_visible()
        box = full.locator("img").bounding_box()
        assert box is not None
        assert box["width"] <= width
        full.click()
        expect(full).to_have_count(0)
        problems = page.evaluate(LAYOUT_PROBLEMS)
        assert problems["scroll"] <= 0, f"the chat at {width} px scrolls sideways"


def test_without_image_support_a_dropped_picture_is_marked_and_the_user_told_once(
    logged_in: Any, server: Server, account: Any, upstream: Upstream
) -> None:
    page = logged_in
    page.evaluate("() => localStorage.removeItem('memchat.picturesNotSeenShown')")
    agent_id = create_agent(server, account.token, "小林")
    open_chat(page, agent_id)
    encoded = base64.b64encode(PHOTO).decode()
    page.evaluate(DROP, ["[data-testid=composer-form]", encoded, "a.png", "image/png"])
    expect(page.get_by_test_id("composer-picture")).to_have_count(1)
    expect(page.get_by_test_id("pictures-not-seen")).to_have_text("当前模型看不到图片：它只会知道你发了一张图片。")

    # not a picture: refused in the composer, with what is taken
    page.evaluate(DROP, ["[data-testid=composer-form]", base64.b64encode(b"hello").decode(), "a.txt", "text/plain"])
    expect(page.get_by_test_id("picture-refused")).to_be_visible()
    expect(page.get_by_test_id("composer-picture")).to_have_count(1)

    upstream.script({"deltas": ["收到。"]})
    page.get_by_test_id("composer").fill("看看这个")
    page.get_by_test_id("send").click()
    expect(page.locator("[data-testid=message][data-role=assistant]").last).to_contain_text("收到。")
    request = [r for r in upstream.requests() if "messages" in r][-1]
    assert request["messages"][-1] == {"role": "user", "content": "看看这个\n[图片]"}
    expect(page.locator("[data-testid=message][data-role=user]").last.get_by_test_id("message-picture")).to_be_visible()

    # told once: the next picture (pasted this time) brings no notice
    page.reload()
    expect(page.get_by_test_id("composer")).to_be_visible()
    page.evaluate(PASTE, [encoded, "b.png", "image/png"])
    expect(page.get_by_test_id("composer-picture")).to_have_count(1)
    expect(page.get_by_test_id("pictures-not-seen")).to_have_count(0)


def test_a_phone_photo_over_the_limit_is_made_smaller_and_sent(
    browser: Any, images_server: Server, upstream: Upstream
) -> None:
    upstream.reset()
    token = _signup(images_server)
    agent_id = create_agent(images_server, token, "小雨")
    photo = noisy_png(1200, 800)
    assert len(photo) > 1_400_000
    with signed_in_page(browser, images_server, token) as page:
        page.set_viewport_size({"width": 390, "height": 844})
        open_chat(page, agent_id)
        upstream.script({"deltas": ["收到", "照片了。"]})
        page.get_by_test_id("attach-input").set_input_files(
            {"name": "photo.png", "mimeType": "image/png", "buffer": photo}
        )
        expect(page.get_by_test_id("composer-picture")).to_have_count(1)
        page.get_by_test_id("composer").fill("看看这张")
        page.get_by_test_id("send").click()
        assistant = page.locator("[data-testid=message][data-role=assistant]").last
        expect(assistant.get_by_test_id("message-text")).to_have_text("收到照片了。")
        expect(page.get_by_test_id("error-banner")).to_have_count(0)
        request = [r for r in upstream.requests() if "messages" in r][-1]
        url = request["messages"][-1]["content"][1]["image_url"]["url"]
        assert url.startswith("data:image/jpeg;base64,")
        assert len(base64.b64decode(url.split(",", 1)[1])) <= 1_400_000
