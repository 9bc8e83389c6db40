"""The recall benchmark's harness (bench/memory_eval/recall/run.py) on two tiny dialogs of the same shape:
a real memchat and a real scripted upstream on loopback, the system prompt of the question scored."""

import json
from pathlib import Path

from bench.memory_eval.recall.run import DIALOGS, Dialog, load_dialogs, markdown, problems, run, score, summarize

# the seed's v1 modes, pinned: the rules extractor keeps 我住在…/我对…过敏, the rules summary keeps the turns
V1 = {"memory_extractor": "rules", "memory_recall": "v1", "summary_strategy": "rules"}

TINY = [
    Dialog(
        id="zh-fact-99",
        lang="zh",
        kind="fact",
        turns=[
            {"user": "我对芒果过敏，吃一口就起疹子", "assistant": "记住了，以后会避开芒果。你要小心。"},
            {"user": "今天下雨了", "assistant": "下雨天记得带伞。路上小心。"},
        ],
        question="晚上想吃点水果，有什么推荐？",
        expect=[["芒果"]],
        key_turns=[0],
    ),
    Dialog(
        id="zh-change-99",
        lang="zh",
        kind="change",
        turns=[
            {"user": "我住在北京，在一家银行上班", "assistant": "北京节奏挺快的。上班辛苦了。"},
            {"user": "今天中午吃的面条", "assistant": "面条简单又顶饱。吃饱了下午有精神。"},
        ],
        question="周末想在附近逛逛公园，有推荐吗？",
        expect=[["上海"]],  # never said: a miss, and the old city is still there
        stale=["北京"],
        key_turns=[0],
    ),
]


def test_score_needs_every_group_and_no_stale_word() -> None:
    assert score("用户住在杭州，对Mango过敏", [["杭州"], ["芒果", "mango"]], [])["hit"]
    missed = score("用户住在杭州", [["杭州"], ["芒果"]], ["北京"])
    assert (missed["hit"], missed["missing"], missed["stale_found"]) == (False, [["芒果"]], [])
    stale = score("用户住在上海，以前在北京", [["上海"]], ["北京"])
    assert (stale["hit"], stale["stale_found"]) == (False, ["北京"])


async def test_a_said_fact_is_a_hit_an_unsaid_one_a_miss_through_a_real_memchat() -> None:
    rows = await run(TINY, V1, concurrency=2)
    by_id = {row["id"]: row for row in rows}
    assert [row["errors"] for row in rows] == [[], []]  # every turn answered with its scripted reply
    fact, change = by_id["zh-fact-99"], by_id["zh-change-99"]
    assert fact["hit"]
    assert "芒果" in fact["system"]
    # only the system messages are scored: the history's user/assistant messages are not in it
    assert "晚上想吃点水果" not in fact["system"]
    assert not change["hit"]
    assert change["missing"] == [["上海"]]
    assert change["stale_found"] == ["北京"]
    assert not change["stale_free"]
    table = summarize(rows)
    assert table["zh"]["fact"] == {"n": 1, "hits": 1, "rate": 1.0}
    assert table["zh"]["change"] == {"n": 1, "hits": 0, "rate": 0.0}
    assert table["zh"]["stale_free"] == {"n": 1, "hits": 0, "rate": 0.0}
    assert table["all"]["all"] == {"n": 2, "hits": 1, "rate": 0.5}
    assert table["en"]["all"]["n"] == 0
    assert "| zh | 1.00 (1/1) | 0.00 (0/1) |" in markdown(table)


def test_the_frozen_set_keeps_its_rules(tmp_path: Path) -> None:
    dialogs = load_dialogs(DIALOGS)
    assert len(dialogs) >= 64
    assert {d.lang for d in dialogs} == {"zh", "en"}
    assert {d.id: problems(d) for d in dialogs if problems(d)} == {}
    assert len({d.id for d in dialogs}) == len(dialogs)
    (tmp_path / "one.jsonl").write_text(json.dumps(TINY[0].__dict__, ensure_ascii=False) + "\n", encoding="utf-8")
    assert load_dialogs(tmp_path / "one.jsonl") == [TINY[0]]


def _dialog(id: str, users: list[str], expect: list[list[str]], stale: list[str] | None = None) -> Dialog:
    return Dialog(id, "zh", "fact", [{"user": u, "assistant": "好的。"} for u in users], "？", expect, stale or [])


async def test_the_replay_says_what_lost_each_fact() -> None:
    """`replay --causes` on the real extractor: a question is never kept, a move retires the old city at
    the turn that says it, a second liking said with 也 keeps the first beside it."""
    from bench.memory_eval.recall.replay import NEVER_KEPT, OLD_KEPT, RETIRED, replay_all

    dialogs = [
        _dialog("held", ["我是麻醉科医生，手术一台接一台。", "楼下新开了一家面包店，闻着好香。"], [["麻醉"]]),
        _dialog("asked", ["你知道现在几点了吗？"], [["几点"]]),
        _dialog("moved", ["我住在杭州。", "今天天气不错。", "我搬到上海了。"], [["杭州"]]),
        _dialog("both", ["我喜欢猫。", "我也喜欢狗。"], [["狗"]], ["猫"]),
    ]
    got = {r.id: (r.held, r.cause, r.turn) for r in await replay_all(dialogs)}
    assert got == {
        "held": (True, None, None),
        "asked": (False, NEVER_KEPT, 0),
        "moved": (False, RETIRED, 2),
        "both": (False, OLD_KEPT, None),
    }
