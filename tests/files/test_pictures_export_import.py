"""The account export carries each picture whole (a data URL); the import takes it back, as file
parts or OpenAI image_url parts, checked like a chat's. Both databases."""

from typing import Any

from tests.conftest import Running, auth, create_agent, signup
from tests.files.pictures import data_url, file_part, png
from tests.files.test_pictures import RED, counts, files_of, history, picture_body, send

BLUE = png(rgb=(10, 10, 230))


async def test_the_export_holds_the_pictures_and_the_import_takes_them_back(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    assert (await send(running, token, picture_body(agent["id"], "看这个", file_part(RED)))).status_code == 200

    export = (await running.client.get("/api/me/export", headers=auth(token))).json()
    user, reply = export["messages"]
    (exported,) = user["files"]
    assert exported["mediaType"] == "image/png"
    assert exported["url"] == data_url("image/png", RED)
    assert reply["files"] == []

    other = await create_agent(running.client, token, name="小周")
    body: dict[str, Any] = {
        "messages": [
            {"role": user["role"], "content": user["content"], "files": user["files"]},
            {"role": reply["role"], "content": reply["content"]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "还有这张"},
                    {"type": "image_url", "image_url": {"url": data_url("image/png", BLUE)}},
                ],
            },
        ]
    }
    imported = await running.client.post(f"/api/agents/{other['id']}/import", json=body, headers=auth(token))
    assert imported.status_code == 202, imported.text
    await running.settle()
    first, _reply, second = await history(running, token, other["id"])
    pictures = [files_of(first), files_of(second)]
    served = [[(await running.client.get(p["url"], headers=auth(token))).content for p in ps] for ps in pictures]
    assert served == [[RED], [BLUE]]


async def test_an_import_with_a_bad_picture_is_refused_and_stores_nothing(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    before = await counts(running)
    body = {
        "messages": [
            {"role": "user", "content": "好的"},
            {"role": "assistant", "content": "嗯"},
            {"role": "user", "parts": [{"type": "text", "text": "图"}, file_part(b"not a picture at all")]},
        ]
    }
    response = await running.client.post(f"/api/agents/{agent['id']}/import", json=body, headers=auth(token))
    assert response.status_code == 415, response.text
    assert response.json()["error"]["code"] == "not_a_picture"
    assert await counts(running) == before
