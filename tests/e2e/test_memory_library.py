"""The memory library's tools: search, importance filter, importance order, bulk archive and delete
with undo, and export/import as JSON."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Account, Screenshots, Server
from tests.e2e.support import create_agent, wait_for

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

MEMORIES = [
    ("boundary", "工作时间不要发消息", 5),
    ("preference", "喜欢晚上聊天", 3),
    ("preference", "喜欢猫", 2),
    ("conversation_style", "回复短一点", 4),
]


def add_memories(server: Server, token: str, agent_id: str, memories: list[tuple[str, str, int]]) -> None:
    with server.api(token) as api:
        for type_, content, importance in memories:
            api.post(
                f"/api/agents/{agent_id}/memories", json={"type": type_, "content": content, "importance": importance}
            ).raise_for_status()


def stored(server: Server, token: str, agent_id: str, status: str = "active") -> list[str]:
    with server.api(token) as api:
        response = api.get(f"/api/agents/{agent_id}/memories", params={"status": status})
        response.raise_for_status()
        return sorted(m["content"] for m in response.json()["memories"])


def contents(page: Any) -> list[str]:
    return [text.strip() for text in page.get_by_test_id("memory-content").all_inner_texts()]


def test_search_filter_and_importance_order(
    logged_in: Any, server: Server, account: Account, screenshots: Screenshots
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    add_memories(server, account.token, agent_id, MEMORIES)
    page.goto(f"/agents/{agent_id}/memories")

    # Most important first.
    expect(page.get_by_test_id("memory-card")).to_have_count(4)
    assert contents(page) == ["工作时间不要发消息", "回复短一点", "喜欢晚上聊天", "喜欢猫"]

    # Raising 喜欢猫 to 5 stars moves it to the top at once.
    page.get_by_test_id("memory-card").filter(has_text="喜欢猫").get_by_test_id("importance-5").click()
    expect(page.get_by_test_id("memory-content").first).to_have_text("喜欢猫")
    assert contents(page) == ["喜欢猫", "工作时间不要发消息", "回复短一点", "喜欢晚上聊天"]

    page.get_by_test_id("memory-search").fill("喜欢")
    expect(page.get_by_test_id("memory-card")).to_have_count(2)
    assert contents(page) == ["喜欢猫", "喜欢晚上聊天"]
    page.get_by_test_id("memory-importance-filter").select_option("4")
    expect(page.get_by_test_id("memory-card")).to_have_count(1)
    expect(page.get_by_test_id("memory-content")).to_have_text("喜欢猫")
    page.get_by_test_id("memory-search").fill("没有这句")
    expect(page.get_by_text("没有符合条件的记忆。")).to_be_visible()
    page.get_by_test_id("memory-search").fill("")
    expect(page.get_by_test_id("memory-card")).to_have_count(3)
    assert contents(page) == ["喜欢猫", "工作时间不要发消息", "回复短一点"]
    screenshots.take(page, "memory-library")


def test_bulk_archive_and_delete_can_be_undone(logged_in: Any, server: Server, account: Account) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    add_memories(server, account.token, agent_id, MEMORIES)
    page.goto(f"/agents/{agent_id}/memories")
    cards = page.get_by_test_id("memory-card")
    expect(cards).to_have_count(4)

    # Archive two; the archive is on the server at once, and 撤销 puts them back.
    cards.filter(has_text="喜欢猫").get_by_test_id("memory-select").check()
    cards.filter(has_text="回复短一点").get_by_test_id("memory-select").check()
    expect(page.get_by_test_id("selected-count")).to_have_text("已选 2 条")
    page.get_by_test_id("bulk-archive").click()
    expect(page.get_by_test_id("undo-toast-text")).to_have_text("已归档 2 条记忆。")
    expect(cards).to_have_count(2)
    assert stored(server, account.token, agent_id, "archived") == ["喜欢猫", "回复短一点"]
    page.get_by_test_id("undo").click()
    expect(page.get_by_test_id("undo-toast")).to_have_count(0)
    expect(cards).to_have_count(4)
    assert stored(server, account.token, agent_id, "archived") == []

    # Delete all (after a confirmation); 撤销 keeps every one, on the server too.
    page.get_by_test_id("select-all").check()
    page.get_by_test_id("bulk-delete").click()
    expect(page.get_by_text("删除所选的 4 条记忆？")).to_be_visible()
    page.get_by_test_id("bulk-delete-confirm").click()
    expect(page.get_by_test_id("undo-toast-text")).to_have_text("已删除 4 条记忆。")
    expect(cards).to_have_count(0)
    page.get_by_test_id("undo").click()
    expect(cards).to_have_count(4)
    assert len(stored(server, account.token, agent_id)) == 4

    # Without undo, closing the toast deletes them for good.
    cards.filter(has_text="喜欢猫").get_by_test_id("memory-delete").click()
    cards.filter(has_text="喜欢猫").get_by_test_id("memory-delete-confirm").click()
    expect(cards).to_have_count(3)
    page.get_by_test_id("undo-toast-close").click()
    expect(page.get_by_test_id("undo-toast")).to_have_count(0)
    assert stored(server, account.token, agent_id) == sorted(["回复短一点", "喜欢晚上聊天", "工作时间不要发消息"])
    page.reload()
    expect(cards).to_have_count(3)


def test_a_delete_is_final_when_the_undo_window_closes_or_the_page_is_left(
    logged_in: Any, server: Server, account: Account
) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    add_memories(server, account.token, agent_id, MEMORIES)
    page.clock.install()
    page.goto(f"/agents/{agent_id}/memories")
    cards = page.get_by_test_id("memory-card")
    expect(cards).to_have_count(4)

    cards.filter(has_text="喜欢猫").get_by_test_id("memory-delete").click()
    cards.filter(has_text="喜欢猫").get_by_test_id("memory-delete-confirm").click()
    expect(page.get_by_test_id("undo-toast")).to_be_visible()
    assert len(stored(server, account.token, agent_id)) == 4  # held back while it can be undone
    page.clock.run_for(8_500)
    expect(page.get_by_test_id("undo-toast")).to_have_count(0)
    assert "喜欢猫" not in stored(server, account.token, agent_id)

    # Leaving the page commits a pending delete too.
    cards.filter(has_text="回复短一点").get_by_test_id("memory-delete").click()
    cards.filter(has_text="回复短一点").get_by_test_id("memory-delete-confirm").click()
    expect(page.get_by_test_id("undo-toast")).to_be_visible()
    page.get_by_role("link", name="回到聊天").click()
    wait_for(lambda: "回复短一点" not in stored(server, account.token, agent_id), "the delete on leaving")
    assert stored(server, account.token, agent_id) == sorted(["喜欢晚上聊天", "工作时间不要发消息"])


def test_export_then_import_into_another_agent(
    logged_in: Any, server: Server, account: Account, tmp_path: Path
) -> None:
    page = logged_in
    source = create_agent(server, account.token, "小雨")
    add_memories(server, account.token, source, MEMORIES)
    with server.api(account.token) as api:
        memory = api.get(f"/api/agents/{source}/memories").json()["memories"][-1]
        api.patch(f"/api/memories/{memory['id']}", json={"status": "archived"}).raise_for_status()

    page.goto(f"/agents/{source}/memories")
    expect(page.get_by_test_id("memory-card")).to_have_count(3)
    with page.expect_download() as download_info:
        page.get_by_test_id("memory-export").click()
    download = download_info.value
    assert download.suggested_filename.startswith("memchat-memories-")
    exported = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert exported["format"] == "memchat.memories.v1"
    assert sorted((m["type"], m["content"], m["importance"], m["status"]) for m in exported["memories"]) == sorted(
        (t, c, i, "archived" if c == memory["content"] else "active") for t, c, i in MEMORIES
    )

    # Into another agent that already has one of them: that one is skipped as a duplicate.
    target = create_agent(server, account.token, "小风")
    add_memories(server, account.token, target, [("preference", "喜欢晚上聊天", 3)])
    file = tmp_path / "memories.json"
    file.write_text(json.dumps(exported, ensure_ascii=False), encoding="utf-8")
    page.goto(f"/agents/{target}/memories")
    expect(page.get_by_test_id("memory-card")).to_have_count(1)
    page.get_by_test_id("memory-import-file").set_input_files(str(file))
    expect(page.get_by_test_id("memory-import-result")).to_have_text("导入了 3 条记忆，跳过 1 条（重复或无效）。")
    expect(page.get_by_test_id("memory-card")).to_have_count(3)
    assert stored(server, account.token, target) == sorted(c for _, c, _ in MEMORIES if c != memory["content"])
    assert stored(server, account.token, target, "archived") == [memory["content"]]

    # A file that is not an export changes nothing.
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    page.get_by_test_id("memory-import-file").set_input_files(str(bad))
    expect(page.get_by_test_id("memory-import-result")).to_have_text("这个文件不是 memchat 导出的记忆 JSON。")
    assert len(stored(server, account.token, target)) == 3
