"""An edit or a regenerate puts the summary back as it stood before the first replaced reply. That
summary was kept before later changes to the memories: the words of a memory that has left since
(superseded, archived, deleted) must not come back with it, and what the memories say now stays.
Through the app with the `standard` profile (embeddings extractor, digest summary), both databases."""

from typing import Any

from tests.conftest import Running, auth, chat, chat_body
from tests.memories.support import Serve, memories, serve_fixture, user_with_agent  # noqa: F401
from tests.upstream import Reply, TestUpstream


async def _say(running: Running, upstream: TestUpstream, token: str, agent_id: str, text: str, **extra: Any) -> None:
    upstream.script(Reply(text="好呀，我记下了。"))
    response = await chat(running, token, agent_id, text, **extra)
    assert response.status_code == 200, response.text
    await running.settle()  # the extraction in the background


async def _regenerate(running: Running, upstream: TestUpstream, token: str, agent_id: str, text: str) -> None:
    upstream.script(Reply(text="重新回答。"))
    body = chat_body(agent_id, text)
    body["trigger"] = "regenerate-message"
    response = await running.client.post("/api/chat", json=body, headers=auth(token))
    assert response.status_code == 200, response.text
    await running.settle()


async def _summary_in_the_next_prompt(running: Running, upstream: TestUpstream, token: str, agent_id: str) -> str:
    await _say(running, upstream, token, agent_id, "晚上吃什么好呢？")
    messages = upstream.chat_requests[-1]["messages"]
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")


async def _stored_summary(running: Running, token: str, agent_id: str) -> str:
    response = await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))
    assert response.status_code == 200, response.text
    conversation_id = response.json()["id"]
    from memchat.models import Conversation

    async with running.db.read() as session:
        conversation = await session.get(Conversation, conversation_id)
        assert conversation is not None
        return conversation.summary or ""


async def test_a_regenerate_does_not_bring_back_a_superseded_memory(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我叫小林，我住在杭州。")
    await _say(running, upstream, token, agent_id, "今天天气不错。")
    await _say(running, upstream, token, agent_id, "我搬到上海了。")
    [old] = await memories(running, token, agent_id, status="archived")
    assert old["content"] == "我住在杭州。"  # superseded after the reply to 我搬到上海了 kept the summary
    assert "杭州" not in await _stored_summary(running, token, agent_id)

    await _regenerate(running, upstream, token, agent_id, "我搬到上海了。")  # puts that older summary back
    restored = await _stored_summary(running, token, agent_id)
    assert "杭州" not in restored
    assert "小林" in restored  # what an active memory says stays
    system = await _summary_in_the_next_prompt(running, upstream, token, agent_id)
    assert "杭州" not in system
    assert "用户：我叫小林" in system
    assert "用户：今天天气不错。" in system
    assert "上海" in system


async def test_an_edit_does_not_bring_back_a_deleted_memory(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我叫小林，我住在杭州。")
    await _say(running, upstream, token, agent_id, "记住，我对花生过敏。")
    await _say(running, upstream, token, agent_id, "今天天气不错。", message_id="u3")
    [peanuts] = [m for m in await memories(running, token, agent_id) if "花生" in m["content"]]
    response = await running.client.delete(f"/api/memories/{peanuts['id']}", headers=auth(token))
    assert response.status_code == 204, response.text
    assert "花生" not in await _stored_summary(running, token, agent_id)

    # an edit of the last message: the summary goes back to before its reply, kept before the delete
    await _say(running, upstream, token, agent_id, "今天有点冷。", message_id="u3", messageId="u3")
    restored = await _stored_summary(running, token, agent_id)
    assert "花生" not in restored
    assert "用户：我叫小林，我住在杭州。" in restored  # the active memories' words stay
    system = await _summary_in_the_next_prompt(running, upstream, token, agent_id)
    assert "花生" not in system
    assert "用户：我叫小林，我住在杭州。" in system
    assert "今天天气不错" not in system  # the edited turn left
    assert "用户：今天有点冷。" in system


async def test_a_regenerate_does_not_bring_back_an_archived_memory(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我叫小林，我住在杭州。")
    await _say(running, upstream, token, agent_id, "今天天气不错。")
    [hangzhou] = [m for m in await memories(running, token, agent_id) if "杭州" in m["content"]]
    response = await running.client.patch(
        f"/api/memories/{hangzhou['id']}", json={"status": "archived"}, headers=auth(token)
    )
    assert response.status_code == 200, response.text

    await _regenerate(running, upstream, token, agent_id, "今天天气不错。")
    system = await _summary_in_the_next_prompt(running, upstream, token, agent_id)
    assert "杭州" not in system
    assert "用户：我叫小林" in system


async def test_a_deleted_memory_takes_what_it_said_before_an_edit_along(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我叫小林，我住在杭州。")
    await _say(running, upstream, token, agent_id, "记住，我对花生过敏。")
    await _say(running, upstream, token, agent_id, "今天天气不错。")
    [peanuts] = [m for m in await memories(running, token, agent_id) if "花生" in m["content"]]
    response = await running.client.patch(
        f"/api/memories/{peanuts['id']}", json={"content": "我对芒果过敏。"}, headers=auth(token)
    )
    assert response.status_code == 200, response.text
    response = await running.client.delete(f"/api/memories/{peanuts['id']}", headers=auth(token))
    assert response.status_code == 204, response.text

    await _regenerate(running, upstream, token, agent_id, "今天天气不错。")  # its history went with it
    system = await _summary_in_the_next_prompt(running, upstream, token, agent_id)
    assert "花生" not in system
    assert "用户：我叫小林，我住在杭州。" in system
