"""A change of one value of a memory that holds more: the memory said again with the new value
(`language.rewrite.with_new_value`), or None where that is not sure."""

import pytest

from memchat.memories.language.rewrite import with_new_value


@pytest.mark.parametrize(
    ("old", "new", "rewritten"),
    [
        (
            "I'm studying accounting at Ohio State.",
            "Switched my major to nursing this semester, numbers all day just wasn't for me.",
            "I'm studying nursing at Ohio State.",
        ),
        (
            "I live in Denver and work as a paralegal at a small firm.",
            "Big news, I moved to Albuquerque last month to be closer to my mom.",
            "I live in Albuquerque and work as a paralegal at a small firm.",
        ),
        (
            "我在武汉大学读大三，学的是新闻。",
            "我转专业了，现在学计算机，学校没变。",
            "我在武汉大学读大三，学的是计算机。",
        ),
        ("我叫小林，我住在杭州", "我搬到上海了", "我叫小林，我住在上海"),
    ],
)
def test_the_changed_value_takes_the_old_ones_place(old: str, new: str, rewritten: str) -> None:
    assert with_new_value(old, new) == rewritten


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Denver.", "I moved to Austin."),  # nothing else to keep: the memory is retired
        ("我在杭州做程序员，住滨江那边。", "上个月我搬到苏州了。"),  # the job's value holds the city
        ("I'm vegetarian and I live in Austin.", "I eat meat again these days."),  # no value to put in place
        ("I work as a bank teller in Fresno.", "I moved to Austin and work as a nurse now."),  # two values change
    ],
)
def test_no_rewrite_where_it_is_not_sure(old: str, new: str) -> None:
    assert with_new_value(old, new) is None
