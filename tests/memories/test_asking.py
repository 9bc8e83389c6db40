"""A request for the moment (a question, "recommend me…", "help me write…") is what a turn is for,
not a memory (`language/asking.py`); a request that says how replies should be from now on, what
not to bring up, or a fact said beside the question, is kept."""

import pytest

from memchat.memories.language.asking import asks_now
from tests.memories.support import Serve, memories, serve_fixture, turn, user_with_agent  # noqa: F401
from tests.upstream import TestUpstream


@pytest.mark.parametrize(
    "text",
    [
        "怎么写请假条比较正式？",
        "推荐几部轻松点的电影呗。",
        "帮我想个朋友圈文案，周末去公园拍的照片。",
        "有没有什么解压的小办法",
        "红烧肉放冰糖还是白糖好？",
        "你说要不要给女儿报个钢琴班？",
        "你说记别人的名字有啥诀窍吗？",
        "any chill phone games?",
        "What's a good movie to watch tonight?",
    ],
)
def test_a_request_for_the_moment_asks_now(text: str) -> None:
    assert asks_now(text)


@pytest.mark.parametrize(
    "text",
    [
        "能不能别再提我前任了？",  # a boundary asked as a question
        "你能不能说话简短一点？",  # how replies should sound
        "以后回答我的时候可以用emoji吗？",
        "帮我分析她的消息时，顺便说说你有几成把握。",  # a standing instruction
        "帮我记一下：我最爱的水果是榴莲。",
        "我对芒果过敏，有什么水果推荐吗？",  # a fact beside the question
        "推荐几部电影，我喜欢科幻片",
        "我搬到上海了，你知道吗？",
        "Can we keep politics out of our chats?",
        "Can you stop using emoji?",
        "whether I ask her out is up to me, ok?",  # a statement to agree with
        "When I vent, just listen first; I'll ask if I want solutions.",
        "I'm allergic to shellfish.",
    ],
)
def test_what_is_meant_to_last_or_is_about_the_user_does_not(text: str) -> None:
    assert not asks_now(text)


async def test_requests_for_the_moment_are_not_remembered_through_the_app(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    for text in (
        "怎么写请假条比较正式？",
        "推荐几部轻松点的电影呗。",
        "能不能别再提我前任了？",
        "我对芒果过敏，有什么水果推荐吗？",
        "any chill phone games?",
    ):
        await turn(running, upstream, token, agent_id, text)
    await running.settle()
    contents = " | ".join(m["content"] for m in await memories(running, token, agent_id))
    for request in ("请假条", "电影", "phone games"):
        assert request not in contents, contents
    assert "前任" in contents  # the boundary stays
    assert "芒果过敏" in contents  # so does the fact beside the question
