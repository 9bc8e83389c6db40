"""A pet the user no longer has retires the memory of having it (`language.pets`), and a pet's own
details stay with it when a statement is cut into facts."""

import pytest

from memchat.memories.language.conflicts import CONTRADICTS, analyse, relation
from memchat.memories.language.facts import split_facts
from memchat.memories.language.pets import no_longer_has


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我养了一只橘猫叫大橘，十四岁了，超能吃。", "上周送走了家里的老猫，算是寿终正寝。"),
        ("我家猫叫芝麻，黑乎乎的一团。", "芝麻送给我表姐养了，我老加班照顾不过来嘛。"),
        ("我的猫叫栗子，是只大橘。", "前阵子它从纱窗缝里跑了，找了一个多月也没找到。"),
        ("我养了只英短叫团子。", "我妈太喜欢那只猫了，被她抱回老家养，我这边新添了一只虎皮鹦鹉。"),
        ("My cat Juniper is 14 and rules the house.", "We lost our old girl in March."),
        ("We have a beagle named Rufus.", "My ex kept the dog when we split, so it's just me and the cat now."),
        ("I keep a bearded dragon named Spike.", "Our lizard died in March, and we adopted a greyhound."),
        ("我家猫叫团子，三岁的英短。", "猫送到我表姐那儿养了，她家有院子。"),
        ("My dog Bruno is a 3-year-old boxer.", "We had to rehome our dog because of my son's allergies."),
    ],
)
def test_a_pet_that_is_gone_contradicts_the_memory_of_having_it(old: str, new: str) -> None:
    assert no_longer_has(new, old)
    assert relation(analyse(new), analyse(old)) == CONTRADICTS


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我养了一只猫。", "我带狗狗去公园走了一圈。"),  # another pet, and a walk
        ("我家狗叫旺财。", "狗粮没了，得去买。"),  # the dog's food ran out
        ("我有一只猫叫咪咪。", "咪咪今天跑了一下午。"),  # it ran about
        ("I have a dog.", "My neighbor's dog died last week, so sad."),  # someone else's dog
        ("我养了一只狗。", "邻居家的狗死了。"),
        ("I have a cat named Mochi.", "Mochi knocked my mug off the table again."),
        ("我老公在物流公司开货车。", "他不跑车了，跑了十年够了。"),  # no pet at all
    ],
)
def test_a_remark_about_a_pet_or_someone_elses_pet_is_no_loss(old: str, new: str) -> None:
    assert not no_longer_has(new, old)


def test_what_follows_a_pet_without_a_subject_is_the_pets() -> None:
    """十四岁了 is the cat's age: it stays with the cat, not made the user's (我十四岁了)."""
    assert split_facts("我养了一只橘猫叫大橘，十四岁了，超能吃。") == ["我养了一只橘猫叫大橘，十四岁了，超能吃。"]
    assert split_facts("我叫陈默，养了只英短叫团子。") == ["我叫陈默。", "我养了只英短叫团子。"]
