"""The embedded llama.cpp model, for real: its own server, and a whole chat turn through memchat on it.

Skipped when the `local` extra (xllamacpp and the packaged Gemma 3 270M GGUF) is not installed.
"""

import re
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI

from memchat.app import create_app
from memchat.llm.local import (
    LOCAL_STOP_SEQUENCES,
    LocalModelServer,
    LocalModelUnavailable,
    local_extra_installed,
)
from memchat.settings import Settings
from memchat.text import normalize
from tests.conftest import Running, auth, chat_body, create_agent, signup, start_server

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not local_extra_installed(), reason="the local extra (xllamacpp + packaged model) is missing"),
]

# Loading takes ~2 s on two cores; generous for a busy CI machine.
READY_TIMEOUT_S = 120.0

# What a chat template writes around turns; none of it may reach a reply.
TEMPLATE_MARKERS = ("<|im_", "<|end", "<|eot", "<|start", "<start_of_turn", "<end_of_turn", "<eos>", "<bos>")


def assert_no_template_tokens(text: str) -> None:
    leaked = [marker for marker in TEMPLATE_MARKERS if marker in text]
    assert not leaked, f"template tokens {leaked} in reply {text!r}"


@pytest.fixture(scope="module")
def local_server() -> Iterator[LocalModelServer]:
    """One demo-model server for the module's direct tests (each load is a couple of seconds of CPU)."""
    server = LocalModelServer(None)
    server.start_in_background()
    yield server
    server.stop()


async def test_streams_a_chinese_reply_through_the_openai_sdk(local_server: LocalModelServer) -> None:
    base_url = await local_server.wait_ready(READY_TIMEOUT_S)
    assert local_server.state == "ready"
    assert local_server.error is None
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", base_url), base_url

    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
    try:
        stream = await client.chat.completions.create(
            model="default",
            messages=[
                {"role": "system", "content": "你是小林，一个温柔的聊天伙伴。请用简洁、自然的中文回答用户。"},
                {"role": "user", "content": "你好，今天过得怎么样？"},
            ],
            stream=True,
            max_tokens=64,
            temperature=0.0,
            stop=LOCAL_STOP_SEQUENCES,
        )
        deltas: list[str] = []
        finish_reasons: list[str] = []
        async for chunk in stream:
            for choice in chunk.choices:
                if choice.delta is not None and choice.delta.content:
                    deltas.append(choice.delta.content)
                if choice.finish_reason:
                    finish_reasons.append(choice.finish_reason)
    finally:
        await client.close()

    text = "".join(deltas)
    assert text.strip(), "the model streamed no text"
    assert finish_reasons in (["stop"], ["length"])
    assert_no_template_tokens(text)


async def test_wait_ready_times_out_cleanly_while_loading_and_stop_ends_the_wait() -> None:
    server = LocalModelServer(None)
    server.start_in_background()
    try:
        # The model takes seconds to load; a millisecond's wait ends first, and loading goes on.
        with pytest.raises(LocalModelUnavailable, match="still loading"):
            await server.wait_ready(0.001)
        assert server.state == "loading"
        assert server.error is None
    finally:
        server.stop()
    assert server.state == "failed"
    with pytest.raises(LocalModelUnavailable, match="stopped"):
        await server.wait_ready(READY_TIMEOUT_S)


async def test_a_missing_model_file_fails_with_a_reason(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model.gguf"
    server = LocalModelServer(str(missing))
    server.start_in_background()
    try:
        with pytest.raises(LocalModelUnavailable, match="no GGUF model file"):
            await server.wait_ready(READY_TIMEOUT_S)
    finally:
        server.stop()
    assert server.state == "failed"
    assert server.error is not None
    assert str(missing) in server.error


async def test_wait_ready_before_start_is_refused() -> None:
    with pytest.raises(LocalModelUnavailable, match="not started"):
        await LocalModelServer(None).wait_ready(1.0)


# --- a whole chat turn through memchat, answered by the local model ---


@pytest.fixture
def local_settings(database_url: str, tmp_path: Path) -> Settings:
    """The app with no MEMCHAT_LLM_BASE_URL: it starts the embedded model itself."""
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        data_dir=tmp_path / "data",
        llm_base_url=None,
        llm_max_tokens=48,  # a short reply keeps the test quick on two cores
        llm_max_retries=0,
        llm_temperature=0.0,  # greedy: the same reply on every run
        local_ready_timeout_s=READY_TIMEOUT_S,
        jwt_secret="test-secret-for-memchat-tests-0123456789",
        chat_rate_limit_per_minute=0,
        web_dist_dir=tmp_path / "no-console",
    )


@pytest.fixture
async def running_local(local_settings: Settings) -> AsyncIterator[Running]:
    app = create_app(local_settings)
    server, task, base_url = await start_server(app)
    async with httpx.AsyncClient(base_url=base_url, timeout=READY_TIMEOUT_S + 60, verify=False) as client:
        yield Running(app=app, client=client, base_url=base_url)
    server.should_exit = True
    await task


async def test_a_chat_turn_end_to_end_on_the_local_model(running_local: Running) -> None:
    client = running_local.client
    health = await client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["llm"] in ("local:loading", "local:ready")

    token = await signup(client, f"local-{uuid.uuid4().hex[:8]}@example.com")
    agent: dict[str, Any] = await create_agent(client, token)
    user_text = "我喜欢你回复简短一点"

    # Sent right away: the turn waits for the model if it is still loading.
    chunks: list[str] = []
    async with client.stream(
        "POST", "/api/chat", json=chat_body(agent["id"], user_text), headers=auth(token)
    ) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/plain")
        async for chunk in response.aiter_text():
            if chunk:
                chunks.append(chunk)
    await running_local.settle()

    reply = "".join(chunks)
    assert reply.strip(), "the local model streamed no text"
    assert_no_template_tokens(reply)
    assert (await client.get("/healthz")).json()["llm"] == "local:ready"

    history = await client.get(f"/api/agents/{agent['id']}/messages", headers=auth(token))
    assert history.status_code == 200
    messages = history.json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["parts"] == [{"type": "text", "text": user_text}]
    saved = messages[1]["parts"][0]["text"]
    assert saved == normalize(reply)
    assert messages[1]["status"] == "completed"

    conversation = (await client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(token))).json()
    assert conversation["messageCount"] == 2
    expected_summary = re.sub(r"\s+", " ", f"用户：{user_text}\nAgent：{saved}").strip()[-1600:]
    assert conversation["summary"] == expected_summary

    memories = (await client.get(f"/api/agents/{agent['id']}/memories?status=active", headers=auth(token))).json()
    assert [(m["type"], m["importance"], m["content"]) for m in memories["memories"]] == [("preference", 3, user_text)]
    assert memories["memories"][0]["sourceMessageId"] == messages[0]["id"]
