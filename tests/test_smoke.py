from typing import Any

from tests.conftest import Running, auth, chat
from tests.upstream import DEFAULT_REPLY, TestUpstream


async def test_a_turn_streams_and_is_saved(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream
) -> None:
    response = await chat(running, user_token, agent["id"], "我喜欢你回复简短一点")
    assert response.status_code == 200, response.text
    assert response.text == DEFAULT_REPLY
    history = (await running.client.get(f"/api/agents/{agent['id']}/messages", headers=auth(user_token))).json()
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    memories = (await running.client.get(f"/api/agents/{agent['id']}/memories", headers=auth(user_token))).json()
    assert memories["memories"][0]["type"] == "preference"
