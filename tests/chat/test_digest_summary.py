"""MEMCHAT_SUMMARY=digest: each turn once, whole sentences, what the user marked survives the window.

The v1 rules stay the default and exact (tests/chat/test_summary.py); here the same 30 turns
through both, and the digest through the API."""

import re

from memchat.chat.digest_summary import (
    AGENT,
    EARLIER,
    MAX_NOTES,
    NOTE,
    NOTES_MAX_CHARS,
    USER,
    build_digest_summary,
    important_sentences,
    roll_summary,
)
from memchat.chat.summary import SUMMARY_MAX_CHARS, build_conversation_summary
from tests.conftest import auth, chat, create_agent, signup
from tests.memories.support import Serve, serve_fixture  # noqa: F401
from tests.upstream import Reply, TestUpstream

EARLY = "别叫我宝贝，我不喜欢。我叫林晓，住在杭州。"


def _turns(n: int) -> list[tuple[str, str]]:
    turns = [(EARLY, "好的，记住了。")]
    for i in range(2, n + 1):
        user = f"第{i}轮：今天我们聊聊第{i}件小事。顺便说一句，天气不错，下午还去公园散了步，看到很多人在放风筝。"
        turns.append((user, f"第{i}轮的回答，听起来很好。公园里放风筝的人多，说明天气真的很舒服。"))
    return turns


def _roll(strategy: str, turns: list[tuple[str, str]]) -> str:
    """The summary after each turn, as commit point 2 rolls it (recent = the history before the turn)."""
    summary: str | None = None
    history: list[tuple[str, str]] = []
    for user, reply in turns:
        summary = roll_summary(strategy, summary, history[-20:], user, reply)
        history += [("user", user), ("assistant", reply)]
    assert summary is not None
    return summary


def test_rules_mode_is_v1_exactly() -> None:
    recent = [("user", "早"), ("assistant", "早呀")]
    assert roll_summary("rules", "旧", recent, "新", "答") == build_conversation_summary("旧", recent, "新", "答")
    assert roll_summary("llm", None, [], "新", "答") == build_conversation_summary(None, [], "新", "答")


def test_after_30_turns_v1_repeats_and_the_digest_does_not() -> None:
    turns = _turns(30)
    v1 = _roll("rules", turns)
    assert v1.count("第29轮：今天") > 1  # the seed's behaviour the digest fixes
    assert "别叫我宝贝" not in v1

    digest = _roll("digest", turns)
    assert len(digest) <= SUMMARY_MAX_CHARS
    for i in range(2, 31):
        assert digest.count(f"第{i}轮：今天") <= 1
        assert digest.count(f"第{i}轮的回答") <= 1
    assert "第30轮：今天" in digest
    assert "第2轮：今天" not in digest
    assert digest.endswith(AGENT + "第30轮的回答，听起来很好。公园里放风筝的人多，说明天气真的很舒服。")
    lines = digest.split("\n")
    # the early turn left the window; what the user marked stayed, as whole sentences
    assert lines[:2] == [NOTE + "别叫我宝贝，我不喜欢。", NOTE + "我叫林晓，住在杭州。"]
    assert EARLY not in digest
    turn_lines = lines[2:]
    assert turn_lines[0].startswith(USER)  # the window starts at a turn, not mid-sentence
    for line in turn_lines:
        assert line.startswith((USER, AGENT))
        assert re.search(r"[。！？…]$", line), line  # each message ends on a whole sentence


def test_a_regenerated_reply_replaces_its_turn() -> None:
    first = build_digest_summary(None, "我今天很累", "休息一下吧。")
    again = build_digest_summary(first, "我今天很累", "早点睡吧。")
    assert again == "用户：我今天很累\nAgent：早点睡吧。"


def test_long_messages_are_clipped_to_whole_sentences() -> None:
    text = "这是第一句话。" * 40
    summary = build_digest_summary(None, text, "嗯。")
    user_line = summary.split("\n")[0]
    assert user_line.startswith(USER + "这是第一句话。")
    assert len(user_line) <= len(USER) + 200
    assert user_line.endswith("。")
    one_sentence = "很" * 500
    assert build_digest_summary(None, one_sentence, "嗯。").split("\n")[0].endswith("…")


def test_notes_are_kept_once_and_at_most_ten() -> None:
    summary: str | None = None
    for i in range(40):
        summary = build_digest_summary(summary, f"记住我第{i}个习惯。" + "闲聊" * 60, "好的。" + "嗯" * 150)
    summary = build_digest_summary(summary, "记住我第39个习惯。" + "闲聊" * 60, "好的。")
    assert summary is not None
    notes = [line for line in summary.split("\n") if line.startswith(NOTE)]
    assert len(notes) <= MAX_NOTES
    assert len(notes) == len(set(notes))
    newest = int(re.findall(r"\d+", notes[-1])[0])
    assert notes == [NOTE + f"记住我第{i}个习惯。" for i in range(newest - MAX_NOTES + 1, newest + 1)]
    assert USER + f"记住我第{newest + 1}个习惯。" in summary  # the next one is still in the window


def test_notes_keep_at_most_half_and_the_newest_turn_stays() -> None:
    summary: str | None = None
    for i in range(30):
        marked = f"记住，第{i}件事对我很重要，" + "因为它关系到我的生活和工作" * 7 + "。"
        summary = build_digest_summary(summary, marked + "闲聊" * 60, "好的。" + "嗯" * 150)
    summary = build_digest_summary(summary, "最后一句", "收到。")
    notes = [line for line in summary.split("\n") if line.startswith(NOTE)]
    assert len(notes) < MAX_NOTES  # ten of these would be over half
    assert 0 < len("\n".join(notes)) <= NOTES_MAX_CHARS
    assert len(summary) <= SUMMARY_MAX_CHARS
    assert summary.endswith("用户：最后一句\nAgent：收到。")


def test_a_v1_summary_from_before_the_switch_becomes_its_last_sentences() -> None:
    v1 = build_conversation_summary(None, [], "我们上次聊到猫。然后说到了狗", "好的。" * 200)
    digest = build_digest_summary(v1, "你好", "你好呀。")
    first, *rest = digest.split("\n")
    assert first.startswith(EARLIER + "好的。")
    assert len(first) <= len(EARLIER) + 300
    assert rest == ["用户：你好", "Agent：你好呀。"]


def test_important_sentences() -> None:
    said = "今天天气不错。不要叫我宝贝！我在上海工作。以后回复短一点。哈哈"
    assert important_sentences(said) == ["不要叫我宝贝！", "我在上海工作。", "以后回复短一点。"]


async def test_digest_through_the_api_keeps_the_early_boundary(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(summary_strategy="digest")
    token = await signup(running.client)
    agent_id = (await create_agent(running.client, token))["id"]
    for i, (user, reply) in enumerate(_turns(12)):
        upstream.script(Reply(text=reply + "嗯" * 100))
        response = await chat(running, token, agent_id, user + "聊" * 60)
        assert response.status_code == 200, (i, response.text)
    conversation = await running.client.get(f"/api/agents/{agent_id}/conversation", headers=auth(token))
    summary: str = conversation.json()["summary"]
    assert summary.startswith(NOTE + "别叫我宝贝，我不喜欢。")
    assert "第12轮：今天" in summary
    assert summary.count("第11轮：今天") == 1
    # the next turn's prompt carries it
    upstream.script(Reply(text="好。"))
    await chat(running, token, agent_id, "还记得我吗")
    system = upstream.chat_requests[-1]["messages"][0]["content"]
    assert "此前对话摘要：" + NOTE + "别叫我宝贝，我不喜欢。" in system


def test_a_superseded_statement_leaves_the_digest_with_its_reply() -> None:
    from memchat.conversations.forget import forget_statements

    summary = "\n".join(
        [
            "用户交代：我在北京上班，每天通勤两小时。",
            "用户：今天好累。",
            "Agent：辛苦啦，早点休息。",
            "用户：我叫小林，我住在杭州。",
            "Agent：杭州是个好地方。",
        ]
    )
    forgotten = forget_statements(summary, ["我在北京上班。", "我住在杭州。"])
    assert forgotten == "\n".join(
        ["用户交代：每天通勤两小时。", "用户：今天好累。", "Agent：辛苦啦，早点休息。", "用户：我叫小林"]
    )


def test_forgetting_leaves_other_summaries_and_unrelated_lines_alone() -> None:
    from memchat.conversations.forget import forget_statements

    v1 = "既有摘要：用户：我在北京上班 Agent：好的"
    assert forget_statements(v1, ["我在北京上班"]) == v1
    digest = "用户：I live in Denver, been here six years.\nAgent：Nice city."
    assert forget_statements(digest, ["I work as a nurse."]) == digest
    assert forget_statements(digest, ["I live in Denver."]) == "用户：been here six years."
    assert forget_statements("用户：好的\nAgent：嗯", ["好的"]) == "用户：好的\nAgent：嗯"  # too short to say anything


def test_what_the_memory_says_now_stays_in_the_digest() -> None:
    from memchat.conversations.forget import forget_statements

    digest = "用户：我开比亚迪。\nAgent：好车。\n用户：后来换了，我开比亚迪海豹，跑得很快。\nAgent：电车省钱。"
    # 开比亚迪 is inside 开比亚迪海豹: without `kept` the new statement's clause would go too
    assert forget_statements(digest, ["我开比亚迪。"]) == "用户：后来换了，跑得很快。"
    assert forget_statements(digest, ["我开比亚迪。"], kept=["我开比亚迪海豹。"]) == (
        "用户：后来换了，我开比亚迪海豹，跑得很快。\nAgent：电车省钱。"
    )
    # a rewrite in other words: the clause both say stays, the one only the old words said goes
    digest = "用户：我住在杭州，养了一只猫。\nAgent：真好。"
    assert forget_statements(digest, ["我住在杭州，养了一只猫。"], ["我住在杭州。"]) == "用户：我住在杭州"
