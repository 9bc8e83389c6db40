"""Prompt assembly, byte for byte (docs/behaviour.md: Prompt assembly)."""

from memchat.chat.prompt import (
    EmptyProfileFields,
    PromptProfile,
    build_profile_message,
    build_prompt_messages,
    build_system_prompt,
)
from memchat.memories.types import StoredMemory

RULES = (
    "请基于当前聊天对象、关系氛围和用户意图，用简洁、自然的中文回答用户。\n"
    "如果用户要求起草回复，请直接给出可发送的聊天内容，避免正式公文格式和职场汇报语气。\n"
    "你的建议应尊重双方边界，避免操控式话术、制造焦虑或诱导过度解读。"
)


def test_system_prompt_defaults_without_memories_or_summary() -> None:
    assert build_system_prompt(None, [], None) == "你是 AI Agent Web 控制台里的聊天陪伴助手。\n" + RULES
    assert build_system_prompt("", [], "") == "你是 AI Agent Web 控制台里的聊天陪伴助手。\n" + RULES


def test_system_prompt_with_persona_memories_and_summary() -> None:
    memories = [
        StoredMemory("m1", "boundary", "我不喜欢被催促", 5),
        StoredMemory("m2", "preference", "我喜欢短句", 3),
        StoredMemory("m3", "relationship_goal", "希望先做朋友", 3),
        StoredMemory("m4", "conversation_style", "说话直接点", 3),
    ]
    assert build_system_prompt("你是阿青。", memories, "用户：你好 Agent：你好") == (
        "你是阿青。\n" + RULES + "\n以下是用户与该 Agent 的长期记忆，请优先尊重：\n"
        "- [边界 / 重要度 5] 我不喜欢被催促\n"
        "- [偏好 / 重要度 3] 我喜欢短句\n"
        "- [关系目标 / 重要度 3] 希望先做朋友\n"
        "- [对话风格 / 重要度 3] 说话直接点\n"
        "此前对话摘要：用户：你好 Agent：你好"
    )


FULL_PROFILE = PromptProfile(
    name="小林",
    handle="@lin",
    status="在线",
    last_active="刚刚",
    relationship="暧昧期",
    headline="周末去哪",
    topic="爬山",
    chemistry_label="心动",
    chemistry="78",
    rhythm="晚上聊",
    profile_note="慢热",
)


def test_profile_message_uses_full_width_punctuation() -> None:
    assert build_profile_message(FULL_PROFILE) == (
        "聊天对象：小林（@lin）\n"
        "对象状态：在线，刚刚\n"
        "关系阶段：暧昧期\n"
        "聊天主题：周末去哪\n"
        "共同点：爬山\n"
        "心动值：心动 78\n"
        "互动节奏：晚上聊\n"
        "对象备注：慢热"
    )


def test_profile_overrides_only_named_fields() -> None:
    stored = PromptProfile(name="小林", handle="@lin", status="在线")
    assert stored.overridden({"status": "忙碌", "unknown": "x"}) == PromptProfile(
        name="小林", handle="@lin", status="忙碌"
    )


def test_messages_order_history_normalized_and_user_text_once() -> None:
    messages = build_prompt_messages(
        default_prompt=None,
        memories=[],
        summary=None,
        profile=PromptProfile(name="a"),
        history=[("user", " 早 \r\n"), ("assistant", "\x00"), ("assistant", "早呀")],
        latest_user_text="今天好累",
    )
    assert [m["role"] for m in messages] == ["system", "user", "user", "assistant", "user"]
    assert messages[2] == {"role": "user", "content": "早"}
    assert messages[3] == {"role": "assistant", "content": "早呀"}
    assert messages[-1] == {"role": "user", "content": "今天好累"}
    assert sum(m["content"] == "今天好累" for m in messages) == 1


def test_compatibility_path_appends_nothing_and_may_have_no_profile() -> None:
    messages = build_prompt_messages(
        default_prompt=None,
        memories=[],
        summary=None,
        profile=None,
        history=[("user", "你好")],
        latest_user_text=None,
    )
    assert messages[1:] == [{"role": "user", "content": "你好"}]


# Empty profile fields. The seed's template (the v1 contract) writes every line whatever is empty;
# MEMCHAT_EMPTY_PROFILE_FIELDS=omitted leaves empty ones out.


def test_empty_fields_are_kept_by_default_as_the_seed_writes_them() -> None:
    profile = PromptProfile(name="测试助手", relationship="朋友")
    expected = (
        "聊天对象：测试助手（）\n对象状态：，\n关系阶段：朋友\n聊天主题：\n共同点：\n心动值： \n互动节奏：\n对象备注："
    )
    assert build_profile_message(profile) == expected
    assert build_profile_message(profile, "kept") == expected


def test_omitted_mode_leaves_out_empty_fields_and_their_punctuation() -> None:
    profile = PromptProfile(name="测试助手", status="在线", chemistry="78", profile_note="  ")
    assert build_profile_message(profile, "omitted") == "聊天对象：测试助手\n对象状态：在线\n心动值：78"
    assert build_profile_message(PromptProfile(handle="@lin", last_active="刚刚"), "omitted") == (
        "聊天对象：@lin\n对象状态：刚刚"
    )
    assert build_profile_message(PromptProfile(name="小林", chemistry_label="心动"), "omitted") == (
        "聊天对象：小林\n心动值：心动"
    )


def test_omitted_mode_is_the_seed_message_when_every_field_is_set() -> None:
    assert build_profile_message(FULL_PROFILE, "omitted") == build_profile_message(FULL_PROFILE)


def test_omitted_mode_sends_no_profile_message_when_all_is_empty() -> None:
    def prompt(mode: EmptyProfileFields) -> list[dict[str, str]]:
        return build_prompt_messages(
            default_prompt=None,
            memories=[],
            summary=None,
            profile=PromptProfile(),
            history=[],
            latest_user_text="你好",
            empty_profile_fields=mode,
        )

    assert [m["role"] for m in prompt("omitted")] == ["system", "user"]
    assert prompt("omitted")[1]["content"] == "你好"
    kept = prompt("kept")
    assert [m["role"] for m in kept] == ["system", "user", "user"]
    assert kept[1]["content"].startswith("聊天对象：（）\n对象状态：，\n")
