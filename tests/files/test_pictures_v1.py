"""Pictures through /v1 (the `openai` SDK's `image_url` parts): stored with the message and sent
upstream as the chat's are; a picture that is not a data URL, or not a picture, is a 4xx in
OpenAI's error shape and nothing is stored. Both databases."""

import openai
import pytest

from memchat.settings import Settings
from tests.conftest import auth, create_agent, serve_app, signup
from tests.files.pictures import data_url, png
from tests.files.test_pictures import counts, files_of, history
from tests.upstream import Reply, TestUpstream

SKY = png(rgb=(30, 140, 220))


async def test_an_image_url_part_is_stored_and_goes_upstream(settings: Settings, upstream: TestUpstream) -> None:
    async with serve_app(settings, llm_images=True) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        url = data_url("image/png", SKY)
        async with openai.AsyncOpenAI(base_url=f"{running.base_url}/v1", api_key=token, max_retries=0) as client:
            upstream.script(Reply(text="好蓝的天。"))
            reply = await client.chat.completions.create(
                model=agent["id"],
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "看这张"},
                            {"type": "image_url", "image_url": {"url": url}},
                        ],
                    }
                ],
            )
            assert reply.choices[0].message.content == "好蓝的天。"
            assert upstream.chat_requests[-1]["messages"][-1]["content"] == [
                {"type": "text", "text": "看这张"},
                {"type": "image_url", "image_url": {"url": url}},
            ]
            await running.settle()
            [user, _] = await history(running, token, agent["id"])
            [stored] = files_of(user)
            assert stored["mediaType"] == "image/png"
            served = await running.client.get(stored["url"], headers=auth(token))
            assert served.content == SKY

            before = await counts(running)
            for bad, status in (("https://example.com/a.png", 400), (data_url("image/png", b"not a picture"), 415)):
                with pytest.raises(openai.APIStatusError) as refused:
                    await client.chat.completions.create(
                        model=agent["id"],
                        messages=[
                            {
                                "role": "user",
                                "content": [
                                    {"type": "text", "text": "这张呢"},
                                    {"type": "image_url", "image_url": {"url": bad}},
                                ],
                            }
                        ],
                    )
                assert refused.value.status_code == status
                assert refused.value.body is not None
            assert await counts(running) == before  # nothing stored
