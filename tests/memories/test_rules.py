"""Memory extraction v1 (docs/behaviour.md: Long-term memory extraction)."""

import pytest

from memchat.memories.language.rules import classify_memory_type, extract_candidate_memories
from memchat.memories.types import MemoryDraft


@pytest.mark.parametrize(
    ("text", "memory_type", "importance"),
    [
        ("我不喜欢被催促", "boundary", 5),
        ("请不要一直追问", "boundary", 5),
        ("我想避免太多压力", "boundary", 3),
        ("我喜欢你说话温柔一点", "preference", 3),
        ("我习惯晚上聊天", "preference", 3),
        ("我更倾向慢慢来", "preference", 3),
        ("我希望我们先做朋友", "relationship_goal", 3),
        ("我正在学着表达自己", "relationship_goal", 3),
        ("以后回复短一点", "conversation_style", 5),
        ("记住我叫小周", "conversation_style", 5),
        ("别用太多表情", "conversation_style", 3),
        ("需要你直接一点", "conversation_style", 3),
    ],
)
def test_type_and_importance(text: str, memory_type: str, importance: int) -> None:
    assert extract_candidate_memories(text) == [MemoryDraft(memory_type, text, importance)]


def test_first_matching_type_wins() -> None:
    # 不喜欢 (boundary) is checked before 喜欢 (preference), 更希望 (preference) before 希望 (goal).
    assert classify_memory_type("我不喜欢也喜欢") == "boundary"
    assert classify_memory_type("我更希望轻松点") == "preference"
    assert classify_memory_type("我们的目标") == "relationship_goal"


@pytest.mark.parametrize("text", ["今天天气不错", "哈哈哈", "", "   ", None, "你吃饭了吗？"])
def test_nothing_to_remember(text: str | None) -> None:
    assert extract_candidate_memories(text) == []


def test_content_is_normalized_and_capped_at_500_characters() -> None:
    text = "  我喜欢" + "长" * 600 + "\r\n"
    [candidate] = extract_candidate_memories(text)
    assert len(candidate.content) == 500
    assert candidate.content.startswith("我喜欢长")


def test_high_importance_keywords() -> None:
    for word in ("记住", "不要", "不喜欢", "边界", "以后"):
        [candidate] = extract_candidate_memories(f"我{word}这个")
        assert candidate.importance == 5, word


def test_the_turn_decides_its_memory_work_once() -> None:
    from memchat.memories.extraction.pipeline import MemoryPipeline
    from memchat.models.message import EXTRACTION_DONE, EXTRACTION_PENDING

    rules = MemoryPipeline()
    found = rules.after_turn("我喜欢猫")
    assert (found.state, [c.content for c in found.inline or ()]) == (EXTRACTION_PENDING, ["我喜欢猫"])
    assert rules.after_turn("今天天气不错").state == EXTRACTION_DONE  # nothing to remember: no job at all
    background = MemoryPipeline(extractor="embeddings").after_turn("我喜欢猫")
    assert (background.state, background.inline) == (EXTRACTION_PENDING, None)  # decided in the background
