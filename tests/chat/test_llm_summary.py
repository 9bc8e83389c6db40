"""The LLM summary's prompt and its tolerant parser (MEMCHAT_SUMMARY=llm)."""

from memchat.chat.llm_summary import build_llm_summary_messages, parse_summary


def test_summary_messages() -> None:
    system, user = build_llm_summary_messages(
        "用户在追一个女生。", [("user", " 她今天回我了\r\n"), ("assistant", "太好了"), ("user", "  ")], max_chars=300
    )
    assert "不超过 300 字" in system["content"]
    assert user["content"] == "已有摘要：用户在追一个女生。\n\n新增对话：\n用户：她今天回我了\nAgent：太好了"
    _, first = build_llm_summary_messages(None, [])
    assert first["content"].startswith("已有摘要：（无）")


def test_parse_summary() -> None:
    assert parse_summary("```\n摘要：用户  和她\n和好了。\n```") == "用户 和她 和好了。"
    assert parse_summary("新摘要: 用户想表白") == "用户想表白"
    assert parse_summary("   ") is None
    assert parse_summary(None) is None
    assert parse_summary("长" * 50, max_chars=10) == "长" * 10
