"""A new way of living (bought, renting, with parents, a dorm, shared, alone) changes the memory of
the old one (`language.housing`), said with or without the word "moved"."""

import pytest

from memchat.memories.language.conflicts import COMPATIBLE, CONTRADICTS, analyse, relation
from memchat.memories.language.housing import lives_otherwise


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我现在跟爸妈住在一起，吃喝不愁。", "房子交了！在龙华买的两居，首付掏空了六个钱包，上周刚搬进去。"),
        ("我住在大学宿舍，四人间。", "这学期在学校外面跟同学合租了个两居室。"),
        ("我在深圳租了个单间，一个人住。", "房东要卖房，我干脆回惠州老家跟爸妈住，每天开车通勤。"),
        ("I live with my parents in their basement in Scranton.", "Signed a lease on a one-bedroom downtown!"),
        ("I rent a room in a house with four other grad students.", "Closed on a little condo in Ypsilanti!"),
        ("I share a house in Davis with three roommates.", "First time living alone, a tiny one-bedroom."),
    ],
)
def test_another_way_of_living_contradicts_the_old_one(old: str, new: str) -> None:
    assert lives_otherwise(new, old)
    assert relation(analyse(new), analyse(old)) == CONTRADICTS


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我爸妈住在哈尔滨。", "爸妈在三亚买了套小房子。"),  # the parents' home, not the user's
        ("I rent a studio in Brooklyn.", "My rent went up 200 bucks, ugh."),  # nothing new of how they live
        ("我跟爸妈住在一起。", "我妈今天做了红烧肉。"),
        ("I live with my roommates in Queens.", "My roommate got a puppy lol"),
        ("We own a house in Ballard.", "We rent a little cabin up north too, for the summers."),  # one more home
    ],
)
def test_a_remark_or_someone_elses_home_changes_nothing(old: str, new: str) -> None:
    assert relation(analyse(new), analyse(old)) == COMPATIBLE
