"""LLM memory extraction as pure functions: the prompt, a response schema, a tolerant parser.

The model sees this turn and the agent's most similar existing memories under short aliases
(m1, m2, ...: small models copy those reliably, UUIDs they do not) and answers a list of
operations: ADD {type, content, importance}, UPDATE {id, content, importance?}, ARCHIVE {id},
NOOP. `parse_operations` accepts what small local models really send (code fences, prose
around the JSON, a bare array or a single object, Chinese type labels, "4" for 4) and drops,
with a reason, everything it cannot trust.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memchat.memories.language.rules import MAX_MEMORY_CHARS
from memchat.memories.types import MEMORY_TYPE_LABELS, MemoryDraft, StoredMemory
from memchat.memories.types import V2_MEMORY_TYPES as MEMORY_TYPES
from memchat.text import normalize

DEFAULT_MAX_OPERATIONS = 3

_TYPE_ALIASES: dict[str, str] = {
    **{t: t for t in MEMORY_TYPES},
    **{label: t for t, label in MEMORY_TYPE_LABELS.items()},
    "relationship goal": "relationship_goal",
    "goal": "relationship_goal",
    "style": "conversation_style",
    "conversation style": "conversation_style",
    "近况": "fact",
    "personal fact": "fact",
    "event": "fact",
}
_OP_KEYS = ("op", "operation", "action", "event", "type_of_change")
_OPS_CONTAINER_KEYS = ("operations", "ops", "memory", "memories", "actions", "result")
_MAX_DECODE_ATTEMPTS = 64
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class UpdateOp:
    id: str  # the real memory id, resolved from the alias
    content: str
    importance: int | None


@dataclass(frozen=True)
class ArchiveOp:
    id: str


MemoryOp = MemoryDraft | UpdateOp | ArchiveOp  # a draft is an ADD


@dataclass(frozen=True)
class ParseResult:
    """`ok` is False when the answer was unusable (the caller falls back to the rules)."""

    ok: bool
    operations: list[MemoryOp] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    noop: bool = False  # the model said explicitly that nothing changes


def memory_aliases(existing: Sequence[StoredMemory]) -> dict[str, str]:
    """alias -> memory id, in the order the memories are shown to the model."""
    return {f"m{i + 1}": memory.id for i, memory in enumerate(existing)}


_EXTRACTION_SYSTEM = "\n".join(
    (
        "你负责维护用户与一个聊天 Agent 之间的长期记忆。"
        "只根据【用户】这一轮说的话，判断有没有值得长期记住的信息，并对已有记忆给出操作。",
        "",
        "值得记住的只有五类，且必须是稳定、以后还用得上的：",
        "- boundary（边界）：用户不想要的话题、称呼、做法，不能越过的底线",
        "- preference（偏好）：用户稳定的喜好、习惯、口味、兴趣",
        "- relationship_goal（关系目标）：用户在这段关系里想达到的状态或计划",
        "- conversation_style（对话风格）：用户希望 Agent 怎么说话、怎么回复",
        "- fact（个人信息）：用户稳定的个人信息（名字、城市、工作、家人、宠物）和有日期的人生大事（面试、搬家、考试），"
        "日期照用户的原话写",
        "一次性的事情、此刻的情绪、对某条草稿的意见、提问和寒暄，都不记。",
        "",
        "操作：",
        "- ADD：新的记忆。content 用一句简洁的中文陈述，以“用户”开头；"
        "importance 为 1-5 的整数（边界和“以后/记住”这类长期要求给 5，一般偏好给 3）。",
        "- UPDATE：用户的话和某条已有记忆说的是同一件事（换了说法、补充或改变了主意），"
        "改写那条记忆，id 用已有记忆的编号（如 m2）。两件能同时成立的事（喜欢猫、也喜欢狗）各记一条，不要合并。",
        "- ARCHIVE：用户明确说某条已有记忆不再成立，且没有新的内容可写。",
        "- NOOP：没有要记的，或已有记忆已经完全覆盖。",
        "同一件事已有记忆时，用 UPDATE，不要 ADD 重复的记忆。最多 {max_ops} 个操作。",
        "",
        "只输出 JSON，不要解释，格式：",
        '{{"operations": [{{"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}}]}}',
        '其他操作的写法：{{"op": "UPDATE", "id": "m1", "content": "...", "importance": 4}}、'
        '{{"op": "ARCHIVE", "id": "m1"}}、{{"op": "NOOP"}}',
    )
)


def build_extraction_messages(
    user_text: str,
    assistant_text: str | None,
    existing: Sequence[StoredMemory],
    *,
    max_ops: int = DEFAULT_MAX_OPERATIONS,
) -> list[dict[str, str]]:
    """Chat messages asking for memory operations on this turn, given the most similar memories."""
    lines = ["已有记忆："]
    if existing:
        for alias, memory in zip(memory_aliases(existing), existing, strict=True):
            label = MEMORY_TYPE_LABELS.get(memory.type, memory.type)
            lines.append(f"- {alias} [{memory.type} / {label} / 重要度 {memory.importance}] {memory.content}")
    else:
        lines.append("（无）")
    lines.append("")
    lines.append(f"【用户】{user_text}")
    if assistant_text:
        lines.append(f"【Agent】{assistant_text}")
    return [
        {"role": "system", "content": _EXTRACTION_SYSTEM.format(max_ops=max_ops)},
        {"role": "user", "content": "\n".join(lines)},
    ]


def extraction_response_format(max_ops: int = DEFAULT_MAX_OPERATIONS) -> dict[str, Any]:
    """`response_format` for chat completions: a strict JSON schema (OpenAI and llama.cpp's server)."""

    def variant(op: str, props: dict[str, Any]) -> dict[str, Any]:
        properties = {"op": {"type": "string", "enum": [op]}, **props}
        return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}

    content = {"type": "string", "minLength": 1, "maxLength": MAX_MEMORY_CHARS}
    importance = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    schema = {
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "maxItems": max_ops,
                "items": {
                    "anyOf": [
                        variant(
                            "ADD",
                            {
                                "type": {"type": "string", "enum": list(MEMORY_TYPES)},
                                "content": content,
                                "importance": importance,
                            },
                        ),
                        variant(
                            "UPDATE",
                            {
                                "id": {"type": "string"},
                                "content": content,
                                "importance": {"anyOf": [importance, {"type": "null"}]},
                            },
                        ),
                        variant("ARCHIVE", {"id": {"type": "string"}}),
                        variant("NOOP", {}),
                    ]
                },
            }
        },
        "required": ["operations"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "memory_operations", "strict": True, "schema": schema}}


def _json_candidates(raw: str) -> list[str]:
    """Texts that may hold the JSON answer, most likely first: fenced blocks, the whole text, bracketed spans."""
    found = [m.group(1) for m in _FENCE.finditer(raw)]
    found.append(raw)
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = raw.find(opener), raw.rfind(closer)
        if start != -1 and end > start:
            found.append(raw[start : end + 1])
    return found


def _decode_first_json(raw: str) -> Any:
    decoder = json.JSONDecoder()
    for text in _json_candidates(raw):
        text = text.strip()
        try:
            return json.loads(text)
        except ValueError:
            pass
        # a JSON value followed or preceded by prose: take the first value that decodes
        openers = [i for i, ch in enumerate(text) if ch in "[{"][:_MAX_DECODE_ATTEMPTS]
        for i in openers:
            try:
                value, _ = decoder.raw_decode(text, i)
            except ValueError:
                continue
            if isinstance(value, dict | list):
                return value
    raise ValueError("no JSON found")


def _as_op_list(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        for key in _OPS_CONTAINER_KEYS:
            if isinstance(lowered.get(key), list):
                return list(lowered[key])
        if any(k in lowered for k in _OP_KEYS):
            return [value]  # a single operation object
    return None


def _importance(value: Any, *, required: bool) -> tuple[int | None, str | None]:
    if value is None:
        return (None, "missing importance") if required else (None, None)
    if isinstance(value, bool):
        return None, f"importance {value!r} is not an integer"
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None:
        return None, f"importance {value!r} is not an integer"
    if not 1 <= number <= 5:
        return None, f"importance {number} is outside 1-5"
    return number, None


def _content(value: Any) -> tuple[str | None, str | None]:
    if not isinstance(value, str):
        return None, "content is not a string"
    text = normalize(value)
    if text is None:
        return None, "content is empty"
    return text[:MAX_MEMORY_CHARS], None


def _parse_one(item: Any, ids: Mapping[str, str]) -> tuple[MemoryOp | str | None, str | None]:
    """(operation, None), ("NOOP", None) or (None, reason)."""
    if not isinstance(item, dict):
        return None, f"operation is not an object: {item!r:.60}"
    fields = {str(k).lower(): v for k, v in item.items()}
    kind = next((fields[k] for k in _OP_KEYS if isinstance(fields.get(k), str)), None)
    if kind is None:
        return None, "operation has no op"
    kind = kind.strip().upper()
    if kind in ("NOOP", "NONE", "NO_OP"):
        return "NOOP", None
    if kind == "ADD":
        raw_type = str(fields.get("type", "")).strip()
        memory_type = _TYPE_ALIASES.get(raw_type.lower(), _TYPE_ALIASES.get(raw_type))
        if memory_type is None:
            return None, f"ADD has unknown type {fields.get('type')!r:.40}"
        content, error = _content(fields.get("content"))
        importance, importance_error = _importance(fields.get("importance"), required=True)
        if error or importance_error or content is None or importance is None:
            return None, f"ADD rejected: {error or importance_error}"
        return MemoryDraft(type=memory_type, content=content, importance=importance), None
    if kind in ("UPDATE", "ARCHIVE", "DELETE"):
        raw_id = fields.get("id", fields.get("memory_id"))
        memory_id = ids.get(str(raw_id).strip()) if isinstance(raw_id, str | int) else None
        if memory_id is None:
            return None, f"{kind} refers to unknown memory {raw_id!r:.40}"
        if kind != "UPDATE":
            return ArchiveOp(id=memory_id), None
        content, error = _content(fields.get("content"))
        importance, importance_error = _importance(fields.get("importance"), required=False)
        if error or importance_error or content is None:
            return None, f"UPDATE rejected: {error or importance_error}"
        return UpdateOp(id=memory_id, content=content, importance=importance), None
    return None, f"unknown op {kind!r:.40}"


def parse_operations(
    raw: str | None, existing: Sequence[StoredMemory], *, max_ops: int = DEFAULT_MAX_OPERATIONS
) -> ParseResult:
    """Validated operations from a model's answer; never raises. Each memory is touched at most once."""
    if not raw or not raw.strip():
        return ParseResult(ok=False, rejected=["empty answer"])
    try:
        items = _as_op_list(_decode_first_json(raw))
    except (ValueError, RecursionError):
        return ParseResult(ok=False, rejected=["no JSON in the answer"])
    if items is None:
        return ParseResult(ok=False, rejected=["JSON holds no list of operations"])
    ids = {**memory_aliases(existing), **{m.id: m.id for m in existing}}
    operations: list[MemoryOp] = []
    rejected: list[str] = []
    touched: set[str] = set()
    noop = False
    for item in items:
        op, reason = _parse_one(item, ids)
        if reason is not None:
            rejected.append(reason)
        elif op == "NOOP":
            noop = True
        elif isinstance(op, MemoryDraft | UpdateOp | ArchiveOp):
            if len(operations) >= max_ops:
                rejected.append(f"more than {max_ops} operations")
            elif isinstance(op, UpdateOp | ArchiveOp) and op.id in touched:
                rejected.append(f"memory {op.id} touched twice")
            else:
                if isinstance(op, UpdateOp | ArchiveOp):
                    touched.add(op.id)
                operations.append(op)
    ok = bool(operations) or noop or not items
    return ParseResult(ok=ok, operations=operations, rejected=rejected, noop=noop or not items)
