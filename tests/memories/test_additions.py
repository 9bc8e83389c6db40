"""A sentence that adds to the fact said just before ("oh and penicillin too" after "I'm allergic to
shellfish"), which the remember-or-not classifier drops when it reads it alone: kept beside that
fact, with its type (`extraction/dropped.py::additions`); never a question, never long after, never
beside a memory that is not a fact or a preference."""

import pytest

from memchat.clock import now_ms
from memchat.memories.extraction.dropped import ADDITION_WINDOW_MS, additions, says_it_adds
from memchat.memories.types import BOUNDARY, FACT, PREFERENCE, StoredMemory
from tests.memories.support import Serve, memories, serve_fixture, turn, user_with_agent  # noqa: F401
from tests.upstream import TestUpstream

SAID = 1_764_741_600_000


def _memory(content: str, memory_type: str = FACT, minutes_before: int = 1) -> StoredMemory:
    return StoredMemory("m1", memory_type, content, 3, SAID - minutes_before * 60_000)


@pytest.mark.parametrize(
    "text",
    [
        "oh and penicillin too, found that out the hard way",
        "And asthma, though it's mild.",
        "We also just got a kitten, Pickles.",
        "周五晚上我还有个羽毛球局，雷打不动。",
        "另外我对芒果也过敏。",
    ],
)
def test_a_sentence_that_adds_is_told_apart(text: str) -> None:
    assert says_it_adds(text)


@pytest.mark.parametrize(
    "text",
    [
        "Do you have a cat too?",
        "I'm too tired to cook.",
        "你也喜欢猫吗？",
        "so tired rn",
        "今天好累",
        "Yeah. Also.",
        "Me too!",
        "我也是",
    ],
)
def test_a_question_or_a_remark_does_not_add(text: str) -> None:
    assert not says_it_adds(text)


def test_an_addition_right_after_a_fact_is_kept_with_its_type() -> None:
    [kept] = additions(
        "oh and penicillin too, found that out the hard way", [], [_memory("I'm allergic to shellfish.")], SAID
    )
    assert (kept.type, kept.content) == (FACT, "penicillin too, found that out the hard way")
    [liked] = additions("And jazz too.", [], [_memory("I love old soul records.", PREFERENCE)], SAID)
    assert liked.type == PREFERENCE


@pytest.mark.parametrize(
    ("text", "content"),
    [
        # the stored sentence keeps its "Also": it says that it adds
        (
            "Also lactose intolerant, just to make dinner plans extra fun.",
            "Also lactose intolerant, just to make dinner plans extra fun.",
        ),
        # a start word with too adds a second thing, it does not replace the first
        ("Started learning the cello too, it's humbling.", "Started learning the cello too, it's humbling."),
    ],
)
def test_an_addition_said_with_also_first_or_a_start_too_is_kept(text: str, content: str) -> None:
    [kept] = additions(text, [], [_memory("I play piano, classical mostly.", PREFERENCE)], SAID)
    assert (kept.type, kept.content) == (PREFERENCE, content)


def test_an_addition_long_after_or_beside_a_boundary_is_not_kept() -> None:
    late = _memory("I'm allergic to shellfish.", minutes_before=ADDITION_WINDOW_MS // 60_000 + 1)
    assert additions("And asthma, though it's mild.", [], [late], SAID) == []
    boundary = _memory("Don't bring up my ex.", BOUNDARY)
    assert additions("And my old job too.", [], [boundary], SAID) == []
    assert additions("And asthma, though it's mild.", [], [], SAID) == []


def test_the_newest_memory_is_the_one_added_to() -> None:
    older = StoredMemory("m1", BOUNDARY, "Don't bring up my ex.", 3, SAID - 5 * 60_000)
    newer = StoredMemory("m2", FACT, "I have type 1 diabetes.", 3, SAID - 60_000)
    [kept] = additions("And asthma, though it's mild.", [], [newer, older], SAID)
    assert kept.type == FACT


async def test_an_addition_said_after_a_fact_is_remembered_beside_it(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(memory_extractor="embeddings")
    token, agent_id = await user_with_agent(running)
    for text in ("I'm allergic to shellfish.", "oh and penicillin too, found that out the hard way", "so tired rn"):
        await turn(running, upstream, token, agent_id, text)
        await running.settle()  # the extraction in the background
    active = await memories(running, token, agent_id)
    assert sorted((m["type"], m["content"]) for m in active) == [
        ("fact", "I'm allergic to shellfish."),
        ("fact", "penicillin too, found that out the hard way"),
    ]
    assert now_ms() - max(m["updatedAtMs"] for m in active) < ADDITION_WINDOW_MS
