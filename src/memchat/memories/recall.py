"""Which memories go into the prompt (MEMCHAT_MEMORY_RECALL=ranked). Pure functions.

Boundaries first, always; within each group a score of importance, recency and similarity to the
current user message. Similarity is min-max scaled over the agent's memories, so the weights hold
for any embedder; a memory without a vector (or a turn whose embedding failed) scores 0 there.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from memchat.memories.types import BOUNDARY

IMPORTANCE_WEIGHT = 0.4
SIMILARITY_WEIGHT = 0.4
RECENCY_WEIGHT = 0.2
RECENCY_HALF_LIFE_MS = 30 * 24 * 3600 * 1000
NEAR_EVENT_BOOST = IMPORTANCE_WEIGHT + RECENCY_WEIGHT


@dataclass(frozen=True)
class RecallCandidate:
    index: int  # position in the caller's list
    type: str
    importance: int
    updated_at_ms: int
    content: str
    similarity: float | None = None
    boost: float = 0.0  # added to the score: a near event (NEAR_EVENT_BOOST) outranks any importance


def _scaled(values: Sequence[float | None]) -> list[float]:
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    low, high = min(present), max(present)
    span = high - low
    return [0.0 if v is None else (1.0 if span <= 0 else (v - low) / span) for v in values]


def recall_score(importance: int, updated_at_ms: int, similarity: float, now_ms: int) -> float:
    """importance 1-5, similarity already scaled to 0-1; recency halves every 30 days."""
    age = max(0, now_ms - updated_at_ms)
    recency = float(0.5 ** (age / RECENCY_HALF_LIFE_MS))
    return IMPORTANCE_WEIGHT * (importance - 1) / 4 + RECENCY_WEIGHT * recency + SIMILARITY_WEIGHT * similarity


def rank_memories(
    candidates: Sequence[RecallCandidate], *, now_ms: int, limit: int, char_budget: int
) -> list[RecallCandidate]:
    """The memories to inject, in prompt order: at most `limit`, their contents within `char_budget`.

    A memory that does not fit the remaining budget is skipped and a shorter one may still go in.
    """
    similarity = _scaled([c.similarity for c in candidates])
    scored = [
        (c.type != BOUNDARY, -recall_score(c.importance, c.updated_at_ms, s, now_ms) - c.boost, c.index, c)
        for c, s in zip(candidates, similarity, strict=True)
    ]
    chosen: list[RecallCandidate] = []
    used = 0
    for *_, candidate in sorted(scored, key=lambda row: row[:3]):
        if len(chosen) >= limit:
            break
        if used + len(candidate.content) > char_budget:
            continue
        chosen.append(candidate)
        used += len(candidate.content)
    return chosen
