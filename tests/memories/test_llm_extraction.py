"""The LLM extraction protocol: prompts, response schema, and the tolerant parser (examples and properties)."""

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memchat.memories.extraction.llm import (
    ArchiveOp,
    ParseResult,
    UpdateOp,
    build_extraction_messages,
    extraction_response_format,
    memory_aliases,
    parse_operations,
)
from memchat.memories.language.rules import MAX_MEMORY_CHARS
from memchat.memories.types import V2_MEMORY_TYPES, MemoryDraft, StoredMemory

EXISTING = [
    StoredMemory("0b7c-uuid-cat", "preference", "用户喜欢猫", 3),
    StoredMemory("9f1e-uuid-rush", "boundary", "用户不喜欢被催着回消息", 5),
]


def parse(raw: str | None, max_ops: int = 3) -> ParseResult:
    return parse_operations(raw, EXISTING, max_ops=max_ops)


def test_extraction_messages_show_memories_under_aliases() -> None:
    system, user = build_extraction_messages("我现在更喜欢狗了", "好的", EXISTING, max_ops=2)
    assert system["role"] == "system"
    assert "最多 2 个操作" in system["content"]
    assert user["role"] == "user"
    assert "- m1 [preference / 偏好 / 重要度 3] 用户喜欢猫" in user["content"]
    assert "- m2 [boundary / 边界 / 重要度 5] 用户不喜欢被催着回消息" in user["content"]
    assert "0b7c-uuid-cat" not in user["content"]
    assert user["content"].endswith("【用户】我现在更喜欢狗了\n【Agent】好的")
    assert memory_aliases(EXISTING) == {"m1": "0b7c-uuid-cat", "m2": "9f1e-uuid-rush"}


def test_extraction_messages_without_memories_or_reply() -> None:
    _, user = build_extraction_messages("你好", None, [])
    assert user["content"] == "已有记忆：\n（无）\n\n【用户】你好"


def test_response_format_is_a_strict_schema() -> None:
    fmt = extraction_response_format(max_ops=4)
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["operations"]
    ops = schema["properties"]["operations"]
    assert ops["maxItems"] == 4
    variants = {v["properties"]["op"]["enum"][0]: v for v in ops["items"]["anyOf"]}
    assert set(variants) == {"ADD", "UPDATE", "ARCHIVE", "NOOP"}
    assert variants["ADD"]["properties"]["type"]["enum"] == list(V2_MEMORY_TYPES)  # fact included
    assert variants["ADD"]["properties"]["importance"]["enum"] == [1, 2, 3, 4, 5]
    for variant in variants.values():
        assert variant["additionalProperties"] is False
        assert variant["required"] == list(variant["properties"])
    json.dumps(fmt)  # serialisable as a request body


def test_every_operation_kind() -> None:
    raw = json.dumps(
        {
            "operations": [
                {"op": "ADD", "type": "conversation_style", "content": "用户希望回复简短", "importance": 4},
                {"op": "UPDATE", "id": "m1", "content": "用户现在更喜欢狗", "importance": None},
                {"op": "ARCHIVE", "id": "m2"},
            ]
        },
        ensure_ascii=False,
    )
    result = parse(raw)
    assert result.ok
    assert not result.rejected
    assert not result.noop
    assert result.operations == [
        MemoryDraft("conversation_style", "用户希望回复简短", 4),
        UpdateOp("0b7c-uuid-cat", "用户现在更喜欢狗", None),
        ArchiveOp("9f1e-uuid-rush"),
    ]


def test_noop_and_empty_list_are_valid_answers() -> None:
    assert parse('{"operations": [{"op": "NOOP"}]}') == ParseResult(ok=True, noop=True)
    assert parse('{"operations": []}') == ParseResult(ok=True, noop=True)
    assert parse("[]") == ParseResult(ok=True, noop=True)


def test_fences_prose_bare_arrays_and_single_objects() -> None:
    add = MemoryDraft("preference", "用户喜欢猫", 3)
    body = '{"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}'
    for raw in (
        f"```json\n[{body}]\n```",
        f'好的，结果如下：\n{{"operations": [{body}]}}\n希望有帮助！',
        f"[{body}]",
        body,
        f"```\n{body}\n```",
    ):
        assert parse(raw).operations == [add], raw


def test_lenient_spellings() -> None:
    raw = json.dumps(
        [
            {"action": "add", "type": "边界", "content": "  用户不想聊前任  ", "importance": "5"},
            {"event": "Update", "memory_id": "9f1e-uuid-rush", "content": "用户不喜欢被催", "importance": 4.0},
            {"Op": "delete", "id": "m1"},
        ],
        ensure_ascii=False,
    )
    assert parse(raw).operations == [
        MemoryDraft("boundary", "用户不想聊前任", 5),
        UpdateOp("9f1e-uuid-rush", "用户不喜欢被催", 4),
        ArchiveOp("0b7c-uuid-cat"),
    ]


def test_invalid_operations_are_dropped_with_reasons() -> None:
    raw = json.dumps(
        [
            {"op": "ADD", "type": "opinion", "content": "x", "importance": 3},
            {"op": "ADD", "type": "preference", "content": "x", "importance": 6},
            {"op": "ADD", "type": "preference", "content": "x", "importance": 0},
            {"op": "ADD", "type": "preference", "content": "x", "importance": "high"},
            {"op": "ADD", "type": "preference", "content": "x", "importance": True},
            {"op": "ADD", "type": "preference", "content": "x"},
            {"op": "ADD", "type": "preference", "content": "   ", "importance": 3},
            {"op": "ADD", "type": "preference", "content": 42, "importance": 3},
            {"op": "UPDATE", "id": "m9", "content": "x"},
            {"op": "ARCHIVE", "id": None},
            {"op": "MERGE", "id": "m1"},
            {"content": "no op"},
            "ADD",
            {"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3},
        ]
    )
    result = parse(raw, max_ops=5)
    assert result.ok
    assert result.operations == [MemoryDraft("preference", "用户喜欢猫", 3)]
    assert len(result.rejected) == 13
    assert any("outside 1-5" in r for r in result.rejected)
    assert any("unknown memory" in r for r in result.rejected)


def test_over_the_limit_and_touching_a_memory_twice() -> None:
    ops = [{"op": "ADD", "type": "preference", "content": f"用户喜欢{i}", "importance": 3} for i in range(4)]
    result = parse(json.dumps(ops), max_ops=2)
    assert len(result.operations) == 2
    assert result.rejected == ["more than 2 operations"] * 2
    twice = parse('[{"op": "UPDATE", "id": "m1", "content": "a"}, {"op": "ARCHIVE", "id": "m1"}]')
    assert twice.operations == [UpdateOp("0b7c-uuid-cat", "a", None)]
    assert twice.rejected == ["memory 0b7c-uuid-cat touched twice"]


def test_content_is_normalised_and_capped() -> None:
    raw = json.dumps([{"op": "ADD", "type": "preference", "content": "猫\x00" * 600, "importance": 3}])
    [op] = parse(raw).operations
    assert isinstance(op, MemoryDraft)
    assert "\x00" not in op.content
    assert len(op.content) == MAX_MEMORY_CHARS


def test_unusable_answers_fall_back() -> None:
    for raw in (None, "", "   ", "我觉得没什么要记的。", '{"answer": 1}', '"ADD"', "{broken", "[[[[["):
        result = parse(raw)
        assert not result.ok, raw
        assert not result.operations
        assert result.rejected
    all_bad = parse('[{"op": "ADD", "type": "x", "content": "y", "importance": 3}]')
    assert not all_bad.ok
    assert all_bad.rejected


def test_truncated_answer_keeps_the_complete_operations() -> None:
    raw = '{"operations": [{"op": "ADD", "type": "preference", "content": "用户喜欢猫", "importance": 3}, {"op": "AD'
    assert parse(raw).operations == [MemoryDraft("preference", "用户喜欢猫", 3)]


# --- properties: whatever comes back, the parser never raises and only returns valid operations ---

_KEYS = st.sampled_from(["op", "action", "type", "content", "importance", "id", "memory_id", "operations", "x"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 8),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["ADD", "update", "ARCHIVE", "NOOP", "m1", "m2", "m3", "preference", "边界", "3", ""]),
    st.text(max_size=20),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_KEYS, inner, max_size=6),
    max_leaves=25,
)


def _assert_valid(result: ParseResult, max_ops: int) -> None:
    assert isinstance(result, ParseResult)
    assert len(result.operations) <= max_ops
    ids = {m.id for m in EXISTING}
    touched: list[str] = []
    for op in result.operations:
        if isinstance(op, MemoryDraft):
            assert op.type in V2_MEMORY_TYPES
            assert type(op.importance) is int
            assert 1 <= op.importance <= 5
        elif isinstance(op, UpdateOp):
            assert op.id in ids
            assert op.importance is None or 1 <= op.importance <= 5
            touched.append(op.id)
        else:
            assert isinstance(op, ArchiveOp)
            assert op.id in ids
            touched.append(op.id)
        if not isinstance(op, ArchiveOp):
            assert op.content
            assert op.content == op.content.strip()
            assert len(op.content) <= MAX_MEMORY_CHARS
    assert len(touched) == len(set(touched))
    assert result.ok or not result.operations


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.integers(0, 4))
def test_any_text_parses_without_raising(raw: str, max_ops: int) -> None:
    _assert_valid(parse(raw, max_ops), max_ops)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.sampled_from(["{}", "```json\n{}\n```", "结果：{} 以上", "{}\n", "[{}"]), st.integers(0, 4))
def test_any_json_shape_parses_to_valid_operations(value: Any, wrapper: str, max_ops: int) -> None:
    raw = wrapper.replace("{}", json.dumps(value, ensure_ascii=False), 1)
    _assert_valid(parse(raw, max_ops), max_ops)
