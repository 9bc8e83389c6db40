"""A picture sent through one `memchat serve` is in history, served, and sent upstream by another:
the bytes live in the shared database, not on one instance's disk."""

from pathlib import Path

import httpx

from tests.conftest import auth, chat_body
from tests.files.pictures import data_url, file_part, png
from tests.test_many_instances import first_user, started
from tests.upstream import Reply, TestUpstream

GREEN = png(rgb=(20, 200, 20))


async def test_a_picture_sent_on_one_instance_is_served_and_sent_upstream_by_another(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path
) -> None:
    async with (
        started(postgres_url, upstream, tmp_path, MEMCHAT_LLM_IMAGES="true") as (a, b),
        httpx.AsyncClient(timeout=30, verify=False) as client,
    ):
        token, agent = await first_user(a)
        upstream.script(Reply(text="绿色的。"), Reply(text="还是那张绿色的。"))
        body = chat_body(str(agent["id"]), "这是什么颜色", message_id="u-1")
        body["messages"][-1]["parts"].append(file_part(GREEN))
        sent = await client.post(f"{a.url}/api/ui/chat", json=body, headers=auth(token))
        assert sent.status_code == 200, sent.text

        # the UI stream ends once the turn is stored
        page = await client.get(f"{b.url}/api/agents/{agent['id']}/messages", headers=auth(token))
        user, reply = page.json()["messages"]
        assert reply["role"] == "assistant"
        (picture,) = [p for p in user["parts"] if p["type"] == "file"]
        served = await client.get(f"{b.url}{picture['url']}", headers=auth(token))
        assert (served.status_code, served.headers["content-type"], served.content) == (200, "image/png", GREEN)

        again = await client.post(
            f"{b.url}/api/ui/chat",
            json=chat_body(str(agent["id"]), "再说一次？", message_id="u-2"),
            headers=auth(token),
        )
        assert again.status_code == 200, again.text

    first, second = upstream.chat_requests
    sent_picture = {"type": "image_url", "image_url": {"url": data_url("image/png", GREEN)}}
    assert first["messages"][-1]["content"] == [{"type": "text", "text": "这是什么颜色"}, sent_picture]
    # b read the picture from the database and sent it with the history
    assert second["messages"][-3] == {
        "role": "user",
        "content": [{"type": "text", "text": "这是什么颜色"}, sent_picture],
    }
    assert second["messages"][-1] == {"role": "user", "content": "再说一次？"}
