"""Rolling summary v1 (docs/behaviour.md: Rolling summary)."""

from memchat.chat.summary import build_conversation_summary


def test_first_turn_summary() -> None:
    assert build_conversation_summary(None, [], "你好", "你好呀") == "用户：你好 Agent：你好呀"


def test_previous_summary_and_only_last_eight_recent_messages() -> None:
    recent = [("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(10)]
    summary = build_conversation_summary("旧的", recent, "新问题", "新回答")
    assert summary == (
        "既有摘要：旧的 用户：m2 Agent：m3 用户：m4 Agent：m5 用户：m6 Agent：m7 用户：m8 Agent：m9 "
        "用户：新问题 Agent：新回答"
    )


def test_whitespace_runs_collapse_to_one_space() -> None:
    assert build_conversation_summary(None, [], "a\n\n b\t c", "d\u3000 e") == "用户：a b c Agent：d e"


def test_keeps_the_last_1600_code_points() -> None:
    long_reply = "末" * 1000 + "尾"
    summary = build_conversation_summary("旧" * 2000, [], "问", long_reply)
    assert len(summary) == 1600
    assert summary.endswith("Agent：" + long_reply)
    assert summary[0] == "旧"


def test_empty_previous_summary_is_left_out() -> None:
    assert build_conversation_summary("", [("assistant", "在")], "嗯", "好") == "Agent：在 用户：嗯 Agent：好"
