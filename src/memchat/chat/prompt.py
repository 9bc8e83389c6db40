"""Prompt assembly, byte for byte as docs/behaviour.md fixes it. Pure functions."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict

from memchat.files.pictures import PICTURE_MARK
from memchat.memories.types import MEMORY_TYPE_LABELS, StoredMemory
from memchat.schemas import ProfileFields
from memchat.text import normalize

DEFAULT_AGENT_PROMPT = "你是 AI Agent Web 控制台里的聊天陪伴助手。"
SYSTEM_RULES = (
    "请基于当前聊天对象、关系氛围和用户意图，用简洁、自然的中文回答用户。",
    "如果用户要求起草回复，请直接给出可发送的聊天内容，避免正式公文格式和职场汇报语气。",
    "你的建议应尊重双方边界，避免操控式话术、制造焦虑或诱导过度解读。",
)
MEMORY_HEADER = "以下是用户与该 Agent 的长期记忆，请优先尊重："
SUMMARY_PREFIX = "此前对话摘要："

# content: the text, or (a user message with pictures the model reads) OpenAI's content parts
ChatMessage = dict[str, Any]
# "kept": the seed's profile message, every line whatever is empty (the v1 contract, the default);
# "omitted": empty fields left out (MEMCHAT_EMPTY_PROFILE_FIELDS=omitted).
EmptyProfileFields = Literal["kept", "omitted"]


class PromptProfile(ProfileFields):
    """The chat partner as the prompt shows it: name, handle and the profile fields."""

    model_config = ConfigDict(frozen=True)

    name: str = ""
    handle: str = ""

    def overridden(self, overrides: Mapping[str, str]) -> "PromptProfile":
        known = {k: v for k, v in overrides.items() if k in PromptProfile.model_fields}
        return self.model_copy(update=known)


def build_system_prompt(default_prompt: str | None, memories: Sequence[StoredMemory], summary: str | None) -> str:
    parts = [default_prompt or DEFAULT_AGENT_PROMPT, *SYSTEM_RULES]
    if memories:
        lines = [MEMORY_HEADER]
        lines += [f"- [{MEMORY_TYPE_LABELS.get(m.type, m.type)} / 重要度 {m.importance}] {m.content}" for m in memories]
        parts.append("\n".join(lines))
    if summary:
        parts.append(SUMMARY_PREFIX + summary)
    return "\n".join(part for part in parts if part)


def build_profile_message(profile: PromptProfile, empty_fields: EmptyProfileFields = "kept") -> str:
    if empty_fields == "omitted":
        return _compact_profile_message(profile)
    return "\n".join(
        [
            f"聊天对象：{profile.name}（{profile.handle}）",
            f"对象状态：{profile.status}，{profile.last_active}",
            f"关系阶段：{profile.relationship}",
            f"聊天主题：{profile.headline}",
            f"共同点：{profile.topic}",
            f"心动值：{profile.chemistry_label} {profile.chemistry}",
            f"互动节奏：{profile.rhythm}",
            f"对象备注：{profile.profile_note}",
        ]
    )


def _compact_profile_message(profile: PromptProfile) -> str:
    """The seed's lines with what is empty (or blank) left out: a line with nothing is dropped.

    The handle's parentheses go with the handle; a line of two values keeps its separator only
    between two. "" when every field is empty.
    """

    def present(*values: str) -> list[str]:
        return [value for value in values if value.strip()]

    name = present(profile.name)
    handle = [f"（{h}）" for h in present(profile.handle)]
    lines = [
        ("聊天对象", "".join(name + handle) if name else "".join(present(profile.handle))),
        ("对象状态", "，".join(present(profile.status, profile.last_active))),
        ("关系阶段", "".join(present(profile.relationship))),
        ("聊天主题", "".join(present(profile.headline))),
        ("共同点", "".join(present(profile.topic))),
        ("心动值", " ".join(present(profile.chemistry_label, profile.chemistry))),
        ("互动节奏", "".join(present(profile.rhythm))),
        ("对象备注", "".join(present(profile.profile_note))),
    ]
    return "\n".join(f"{label}：{value}" for label, value in lines if value)


@dataclass(frozen=True)
class Pictures:
    """The pictures sent with a user message: how many, and those the model is sent, as data URLs."""

    count: int = 0
    data_urls: tuple[str, ...] = ()


NO_PICTURES = Pictures()


def user_content(text: str, pictures: Pictures) -> str | list[dict[str, Any]]:
    """The text alone; with pictures the model is sent, text and image_url parts; with pictures it
    is not sent, the text and a mark for each, so that the model knows one was shown."""
    if pictures.data_urls:
        images = [{"type": "image_url", "image_url": {"url": url}} for url in pictures.data_urls]
        return [{"type": "text", "text": text}, *images]
    if pictures.count:
        return text + "\n" + " ".join([PICTURE_MARK] * pictures.count)
    return text


def history_messages(
    history: Sequence[tuple[str, str]], pictures: Sequence[Pictures] | None = None
) -> list[ChatMessage]:
    """Role kept, text normalized, empty ones skipped; `pictures`, when given, one per message."""
    out: list[ChatMessage] = []
    for index, (role, content) in enumerate(history):
        text = normalize(content)
        if text is not None:
            sent = pictures[index] if pictures is not None else NO_PICTURES
            out.append({"role": role, "content": user_content(text, sent)})
    return out


def build_prompt_messages(
    *,
    default_prompt: str | None,
    memories: Sequence[StoredMemory],
    summary: str | None,
    profile: PromptProfile | None,
    history: Sequence[tuple[str, str]],
    latest_user_text: str | None,
    empty_profile_fields: EmptyProfileFields = "kept",
    history_pictures: Sequence[Pictures] | None = None,
    latest_pictures: Pictures = NO_PICTURES,
) -> list[ChatMessage]:
    """System, profile, history, then the user's text once.

    `latest_user_text` is None on the compatibility path, whose history (the client's messages)
    already ends with the user's input. With `empty_profile_fields="omitted"` a profile whose
    fields are all empty sends no profile message.
    """
    messages: list[ChatMessage] = [
        {"role": "system", "content": build_system_prompt(default_prompt, memories, summary)}
    ]
    if profile is not None and (profile_text := build_profile_message(profile, empty_profile_fields)):
        messages.append({"role": "user", "content": profile_text})
    messages += history_messages(history, history_pictures)
    if latest_user_text is not None:
        messages.append({"role": "user", "content": user_content(latest_user_text, latest_pictures)})
    return messages
