"""docs/clients.md's `openai` SDK example, run as it stands against a real memchat."""

import asyncio
import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.conftest import Running, create_agent
from tests.upstream import DEFAULT_REPLY, TestUpstream

CLIENTS_MD = Path(__file__).resolve().parents[2] / "docs" / "clients.md"


def _openai_example() -> str:
    section = CLIENTS_MD.read_text().split("## OpenAI-compatible `/v1`", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


async def test_the_documented_example_holds_a_conversation_with_memory(
    running: Running, user_token: str, upstream: TestUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    await create_agent(running.client, user_token)
    code = _openai_example().replace("http://localhost:8000", running.base_url)
    monkeypatch.setenv("MEMCHAT_KEY", user_token)
    out = io.StringIO()

    def run() -> None:  # the SDK's sync client, off the event loop that serves memchat
        exec(compile(code, str(CLIENTS_MD), "exec"), {"__name__": "docs_example"})

    with contextlib.redirect_stdout(out):
        await asyncio.to_thread(run)

    lines = out.getvalue().splitlines()
    assert lines[0] == DEFAULT_REPLY
    assert lines[1] == DEFAULT_REPLY
    assert re.fullmatch(r"~\d+ tokens", lines[2])
    second_prompt = upstream.chat_requests[-1]["messages"]
    assert "- [对话风格 / 重要度 3] 我叫小明" in second_prompt[0]["content"]
    assert second_prompt[-1] == {"role": "user", "content": "你还记得我叫什么吗？"}
