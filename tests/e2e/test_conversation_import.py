"""导入聊天记录 on the memory page: an exported conversation becomes the agent's history, its progress is
shown until extraction is done, and the memories it produced appear in the library."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Account, Server
from tests.e2e.support import create_agent, history

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api").expect

CONVERSATION = {
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "以后不要叫我宝贝", "timestamp": "2024-03-01T09:00:00Z"},
        {"role": "assistant", "content": "好的，记住了。"},
        {"role": "user", "content": "我喜欢晚上散步"},
        {"role": "assistant", "content": "晚上散步很放松。"},
    ]
}


def test_import_a_conversation_file(logged_in: Any, server: Server, account: Account, tmp_path: Path) -> None:
    page = logged_in
    agent_id = create_agent(server, account.token, "小雨")
    file = tmp_path / "chat.json"
    file.write_text(json.dumps(CONVERSATION, ensure_ascii=False), encoding="utf-8")
    page.goto(f"/agents/{agent_id}/memories")
    expect(page.get_by_test_id("memory-card")).to_have_count(0)

    page.get_by_test_id("conversation-import-file").set_input_files(str(file))
    status = page.get_by_test_id("conversation-import-status")
    expect(status).to_have_attribute("data-state", "done")
    expect(status).to_have_text("已导入 4 条消息，记忆已提取。")
    expect(page.get_by_test_id("memory-content")).to_have_text(["以后不要叫我宝贝", "我喜欢晚上散步"])
    assert [m["parts"][0]["text"] for m in history(server, account.token, agent_id)] == [
        "以后不要叫我宝贝",
        "好的，记住了。",
        "我喜欢晚上散步",
        "晚上散步很放松。",
    ]

    # A file that is not a conversation changes nothing.
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    page.get_by_test_id("conversation-import-file").set_input_files(str(bad))
    expect(status).to_contain_text("不是可导入的聊天记录")
    assert len(history(server, account.token, agent_id)) == 4
