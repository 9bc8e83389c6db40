"""v1 long-term memory extraction (docs/behaviour.md: rules, no LLM). Pure functions."""

import re

from memchat.memories.types import BOUNDARY, CONVERSATION_STYLE, PREFERENCE, RELATIONSHIP_GOAL, MemoryDraft
from memchat.text import normalize

MAX_CANDIDATES_PER_TURN = 2
MAX_MEMORY_CHARS = 500

_SHOULD_REMEMBER = re.compile(r"我|不喜欢|喜欢|希望|想要|以后|记住|别|不要|需要|习惯|倾向")
_TYPE_RULES = (
    (re.compile(r"不喜欢|不要|避免|边界|压力|操控|套路"), BOUNDARY),
    (re.compile(r"喜欢|偏好|更希望|倾向|习惯"), PREFERENCE),
    (re.compile(r"目标|想要|希望|正在"), RELATIONSHIP_GOAL),
)
_HIGH_IMPORTANCE = re.compile(r"记住|不要|不喜欢|边界|以后")


def classify_memory_type(text: str) -> str:
    for pattern, memory_type in _TYPE_RULES:
        if pattern.search(text):
            return memory_type
    return CONVERSATION_STYLE


def rule_importance(text: str) -> int:
    return 5 if _HIGH_IMPORTANCE.search(text) else 3


def extract_candidate_memories(user_text: str | None) -> list[MemoryDraft]:
    """From this turn's user text only: remember-or-not, type, importance, content (first 500 chars)."""
    text = normalize(user_text)
    if text is None or not _SHOULD_REMEMBER.search(text):
        return []
    return [
        MemoryDraft(type=classify_memory_type(text), content=text[:MAX_MEMORY_CHARS], importance=rule_importance(text))
    ][:MAX_CANDIDATES_PER_TURN]
