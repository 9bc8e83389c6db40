"""One fact per memory, and sameness by meaning in both languages: the pure language parts."""

import pytest

from memchat.memories.language.conflicts import COMPATIBLE, CONTRADICTS, SAME, analyse, content_overlap, relation
from memchat.memories.language.facts import split_facts
from memchat.memories.language.slots import read_slots


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("我叫小林，我住在杭州。", ["我叫小林。", "我住在杭州。"]),
        (
            "我叫小林，今年25岁，住在杭州，是一名护士。",
            ["我叫小林。", "我今年25岁。", "我住在杭州。", "我是一名护士。"],
        ),  # noqa: E501
        ("I'm Dana and I teach middle school math.", ["I'm Dana.", "I teach middle school math."]),
        ("I'm 34 and I have a border collie named Scout.", ["I'm 34.", "I have a border collie named Scout."]),
        ("我叫小满，在昆明一家民宿做前台。", ["我叫小满。", "我在昆明一家民宿做前台。"]),  # after a name, another fact
        ("我今年二十九，在深圳做跨境电商。", ["我今年二十九。", "我在深圳做跨境电商。"]),  # an age in words
        ("我在绵阳，孩子在读幼儿园中班。", ["我在绵阳。", "我孩子在读幼儿园中班。"]),  # someone else's fact
        ("我老公在银行上班，我在医院当护士。", ["我老公在银行上班。", "我在医院当护士。"]),  # each their own subject
        ("我叫小林，我女儿叫朵朵，在上幼儿园。", ["我叫小林。", "我女儿叫朵朵，在上幼儿园。"]),
        (
            "我是急诊科护士，上夜班，晚上十点到早上六点。",
            ["我是急诊科护士。", "我上夜班，晚上十点到早上六点。"],
        ),  # job, shift
        ("I'm Bea, and my dog is a husky named Koda.", ["I'm Bea.", "My dog is a husky named Koda."]),  # no "and" left
        (
            "I grew up in Tulsa and I work security at a casino.",
            ["I grew up in Tulsa.", "I work security at a casino."],
        ),
        # back to the user after someone else, though the partner's clause fills no slot
        ("我老公在深圳做程序员，我在广州当老师。", ["我老公在深圳做程序员。", "我在广州当老师。"]),
        (
            "My mom lives in Phoenix and my sister is up in Boise.",
            ["My mom lives in Phoenix.", "My sister is up in Boise."],
        ),
        # two things of one's own, each said whole, though no slot reads them
        (
            "I'm allergic to penicillin and I'm on birth control pills.",
            ["I'm allergic to penicillin.", "I'm on birth control pills."],
        ),
    ],
)
def test_a_statement_of_several_facts_is_cut_into_them(text: str, facts: list[str]) -> None:
    assert split_facts(text) == facts


@pytest.mark.parametrize(
    "text",
    [
        "我住在杭州，离西湖很近。",  # one fact and what goes with it
        "我喜欢猫，我也喜欢狗。",  # no slot: the classifier's sentence stays whole
        "I live in Denver, I love it there.",
        "My boyfriend Tyler and I have been together 3 years.",  # "and" joins two subjects
        "我女朋友叫小雨，在读研。",  # the studies are the girlfriend's, not the user's
        "我女儿叫朵朵，今年五岁，在上幼儿园。",  # all of it about the daughter
        "我男朋友叫周明，是个程序员。",
        "I love hiking and I go every weekend.",  # the second says only when
        "我最近在学游泳，我觉得挺难的。",  # a view of the first
        "I'm not doing the whole plant thing anymore, I eat eggs and fish again.",  # one change, two clauses
        "I can't eat gluten, I have celiac.",  # a comma alone: what follows often goes on about the first
        "My therapist is Janine, I see her every other Thursday.",  # her: the therapist
        "My nephew inherited the hamster, and I got a pair of zebra finches.",  # a pet's change, told whole
    ],
)
def test_one_fact_stays_whole(text: str) -> None:
    assert split_facts(text) == [text]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I can't stand cilantro, it tastes like soap", "I work from home as a translator, mostly German to English"),
        ("I'm having hip replacement surgery on the 9th of next month", "My husband passed last spring"),
        ("I love cats", "I also have a dog"),
    ],
)
def test_unrelated_english_statements_are_never_the_same(old: str, new: str) -> None:
    a, b = analyse(old), analyse(new)
    assert content_overlap(a.chunks, b.chunks) < 0.3  # words, not letters, are compared
    assert relation(b, a, similarity=0.7) == COMPATIBLE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Denver.", "We moved to Portland last month."),
        ("My pottery class is on Tuesdays.", "Pottery class moved to Thursdays."),
        ("I'm up at 7 every morning.", "been getting up at 6 now"),
        ("我是奶茶店店长。", "我现在在健身房当会籍顾问。"),
        ("我无肉不欢。", "我现在吃素了。"),
        ("keep your replies short please", "you can go into more detail now"),
    ],
)
def test_a_new_value_for_a_slot_is_a_change_of_mind(old: str, new: str) -> None:
    assert relation(analyse(new), analyse(old)) == CONTRADICTS


def test_shared_wording_needs_the_vectors_to_agree() -> None:
    a, b = analyse("I love sushi"), analyse("sushi is my favorite food")
    assert relation(b, a) == SAME  # no vectors: the wording decides
    assert relation(b, a, similarity=0.2) == COMPATIBLE  # the meanings are far apart: not the same


def test_mixed_language_text_reads_both_slots() -> None:
    slots, _ = read_slots("我叫小林, I live in Denver")
    assert slots["name"] == frozenset({"小林"})
    assert slots["city"] == frozenset({"denver"})


def test_a_value_said_with_also_adds_to_the_slot() -> None:
    nurse = analyse("我是一名护士。")
    assert relation(analyse("我现在是一名老师。"), nurse) == CONTRADICTS
    assert relation(analyse("我也是一名老师。"), nurse) == COMPATIBLE  # a second job, not a new one
