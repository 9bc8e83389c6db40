"""Pictures sent with a message (the AI SDK's file parts): stored in the database with the message,
served to its owner only, in history, sent upstream as image_url parts when the model reads
pictures (else marked [图片] in the prompt), the limits and bad inputs refused with nothing
stored. Both databases."""

from typing import Any

import pytest
from sqlalchemy import func, select

from memchat.models import Message, MessageFile
from memchat.settings import Settings
from tests.conftest import Running, auth, chat_body, create_agent, serve_app, signup
from tests.files.pictures import JPEG_HEAD, data_url, file_part, png
from tests.upstream import Reply, TestUpstream

RED, BLUE = png(rgb=(220, 20, 20)), png(rgb=(20, 20, 220))


def picture_body(agent_id: str, text: str, *files: dict[str, str], **extra: Any) -> dict[str, Any]:
    body = chat_body(agent_id, text, **extra)
    body["messages"][-1]["parts"] += list(files)
    return body


async def send(running: Running, token: str, body: dict[str, Any]) -> Any:
    response = await running.client.post("/api/ui/chat", json=body, headers=auth(token))
    await running.settle()
    return response


async def history(running: Running, token: str, agent_id: str) -> list[dict[str, Any]]:
    response = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    assert response.status_code == 200, response.text
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


def files_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"] == "file"]


async def counts(running: Running) -> tuple[int, int]:
    async with running.db.read() as session:
        messages = (await session.execute(select(func.count()).select_from(Message))).scalar_one()
        files = (await session.execute(select(func.count()).select_from(MessageFile))).scalar_one()
    return messages, files


async def test_a_picture_is_stored_with_the_message_shown_in_history_and_served_to_its_owner_only(
    running: Running, upstream: TestUpstream
) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    upstream.script(Reply(text="好漂亮的红色。"))
    response = await send(running, token, picture_body(agent["id"], "看看这张", file_part(RED)))
    assert response.status_code == 200, response.text

    user, reply = await history(running, token, agent["id"])
    assert [p["text"] for p in user["parts"] if p["type"] == "text"] == ["看看这张"]
    (picture,) = files_of(user)
    assert picture["mediaType"] == "image/png"
    assert picture["url"].startswith("/api/files/")
    assert files_of(reply) == []

    served = await running.client.get(picture["url"], headers=auth(token))
    assert served.status_code == 200
    assert served.headers["content-type"] == "image/png"
    assert served.content == RED
    stranger = await signup(running.client)
    assert (await running.client.get(picture["url"], headers=auth(stranger))).status_code == 404
    assert (await running.client.get(picture["url"])).status_code == 401

    # the demo model reads no pictures (MEMCHAT_LLM_IMAGES off): the prompt says one was sent
    (request,) = upstream.chat_requests
    assert request["messages"][-1] == {"role": "user", "content": "看看这张\n[图片]"}


async def test_with_images_on_the_turn_and_the_bounded_history_go_upstream_as_image_url_parts(
    settings: Settings, upstream: TestUpstream
) -> None:
    async with serve_app(settings, llm_images=True, llm_image_history_messages=1) as app:
        token = await signup(app.client)
        agent = await create_agent(app.client, token)
        upstream.script(Reply(text="红色。"), Reply(text="蓝色。"), Reply(text="都看到了。"))
        assert (await send(app, token, picture_body(agent["id"], "第一张", file_part(RED)))).status_code == 200
        assert (await send(app, token, picture_body(agent["id"], "第二张", file_part(BLUE)))).status_code == 200
        assert (await send(app, token, chat_body(agent["id"], "你看到了几张？"))).status_code == 200

    first, second, third = upstream.chat_requests
    assert first["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "第一张"},
            {"type": "image_url", "image_url": {"url": data_url("image/png", RED)}},
        ],
    }
    assert second["messages"][-1]["content"][1]["image_url"]["url"] == data_url("image/png", BLUE)
    history_of_third = [m for m in third["messages"] if m["role"] == "user"][-3:]
    # one earlier message's pictures go along (the bound); the older one is a mark
    assert history_of_third == [
        {"role": "user", "content": "第一张\n[图片]"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "第二张"},
                {"type": "image_url", "image_url": {"url": data_url("image/png", BLUE)}},
            ],
        },
        {"role": "user", "content": "你看到了几张？"},
    ]


@pytest.mark.parametrize(
    ("part", "status", "code"),
    [
        (file_part(b"\x89PNG\r\n\x1a\n" + b"\x00" * 3000), 413, "picture_too_large"),
        ({"type": "file", "mediaType": "text/plain", "url": data_url("text/plain", b"hello")}, 415, "not_a_picture"),
        (file_part(b"GIF9 this is not a picture"), 415, "not_a_picture"),
        (file_part(RED, media_type="image/jpeg"), 422, "media_type_mismatch"),
        (file_part(JPEG_HEAD, media_type="image/png", url_type="image/png"), 422, "media_type_mismatch"),
        (file_part(RED, media_type="image/png", url_type="image/jpeg"), 422, "media_type_mismatch"),
        ({"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,@@@@"}, 422, "file_not_base64"),
        ({"type": "file", "mediaType": "image/png", "url": "https://example.com/a.png"}, 422, "file_url_unsupported"),
        ({"type": "file", "mediaType": "image/png"}, 422, "file_url_missing"),
        (
            {"type": "file", "mediaType": "image/png", "url": "/api/files/00000000-0000-0000-0000-000000000000"},
            422,
            "file_not_found",
        ),
    ],
)
async def test_bad_pictures_are_refused_clearly_and_nothing_is_stored(
    settings: Settings, upstream: TestUpstream, part: dict[str, str], status: int, code: str
) -> None:
    async with serve_app(settings, max_picture_bytes=2000) as app:
        token = await signup(app.client)
        agent = await create_agent(app.client, token)
        before = await counts(app)
        response = await send(app, token, picture_body(agent["id"], "看图", part))
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code
        assert "Traceback" not in response.text
        assert await counts(app) == before
        assert await history(app, token, agent["id"]) == []
    assert upstream.chat_requests == []


async def test_too_many_pictures_and_another_users_picture_are_refused(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    five = [file_part(RED)] * 5
    response = await send(running, token, picture_body(agent["id"], "五张", *five))
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "too_many_pictures"

    owner = await signup(running.client)
    owners_agent = await create_agent(running.client, owner)
    assert (await send(running, owner, picture_body(owners_agent["id"], "我的", file_part(RED)))).status_code == 200
    (theirs,) = files_of((await history(running, owner, owners_agent["id"]))[0])
    before = await counts(running)
    stolen = {"type": "file", "mediaType": "image/png", "url": theirs["url"]}
    response = await send(running, token, picture_body(agent["id"], "借用", stolen))
    assert response.status_code == 422
    assert await counts(running) == before


async def test_an_edit_keeps_the_pictures_it_sends_back_by_url(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    body = picture_body(agent["id"], "这是什么花", file_part(RED), message_id="u-1")
    assert (await send(running, token, body)).status_code == 200
    (stored,) = files_of((await history(running, token, agent["id"]))[0])

    edit = chat_body(agent["id"], "这是什么颜色的花", message_id="u-1", messageId="u-1")
    edit["messages"][-1]["parts"].append({"type": "file", "mediaType": "image/png", "url": stored["url"]})
    assert (await send(running, token, edit)).status_code == 200
    user, _reply = await history(running, token, agent["id"])
    assert user["parts"][0]["text"] == "这是什么颜色的花"
    (kept,) = files_of(user)
    assert (await running.client.get(kept["url"], headers=auth(token))).content == RED
    assert upstream.chat_requests[-1]["messages"][-1]["content"] == "这是什么颜色的花\n[图片]"


async def test_deleting_the_conversation_or_the_account_removes_the_pictures(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    assert (await send(running, token, picture_body(agent["id"], "一", file_part(RED)))).status_code == 200
    conversation = (await running.client.get(f"/api/agents/{agent['id']}/conversation", headers=auth(token))).json()
    deleted = await running.client.delete(f"/api/conversations/{conversation['id']}", headers=auth(token))
    assert deleted.status_code == 204
    assert (await counts(running))[1] == 0

    assert (await send(running, token, picture_body(agent["id"], "二", file_part(BLUE)))).status_code == 200
    assert (await counts(running))[1] == 1
    gone = await running.client.delete("/api/me", headers=auth(token))
    assert gone.status_code == 204, gone.text
    assert await counts(running) == (0, 0)
