"""What a statement is about, read from its sentence vector: the topic slots no pattern names.

The slot patterns (`slots.py`, `slots_en.py`) read a value precisely where they match; many
things a person has one of at a time have no pattern (the car, a child's school, the shift, the
day a class is on, the sport, the band, the phone, the commute...). For those a statement's topic
is the one whose prototype sentences its vector is nearest to (centred cosine, the best prototype
of each topic), when it is near enough (`TOPIC_FLOOR`) and clearly nearer than any other topic
(`TOPIC_MARGIN`). Two statements on the same topic, the newer one saying it changed something
(现在, 换了, now, switched...), are a change of mind (`conflicts.relation`).

The prototypes are written in both languages, with values unlike one another, so that the topic
comes from what the sentence is about rather than from a value it names. numpy is imported by the
`topic_vectors.py` only, when an embedder is configured.
"""

TOPIC_FLOOR = 0.35
"""Centred cosine below which a statement is about no known topic."""
TOPIC_MARGIN = 0.03
"""How much nearer the best topic must be than the next one."""

TOPIC_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "car": (
        "我开的车是一辆福特。",
        "我现在开一辆二手的马自达。",
        "我的车是辆白色的SUV。",
        "I drive a blue Volkswagen Golf.",
        "My car is an old Jeep.",
        "I got a Hyundai as my car now.",
    ),
    "school": (
        "我儿子在第三中学读书。",
        "孩子上的是区里的双语幼儿园。",
        "我在师范大学读研。",
        "My son attends Riverside High School.",
        "Our kids go to a Montessori school.",
        "I go to community college downtown.",
    ),
    "shift": (
        "我上早班，早上六点到岗。",
        "我这个月都是晚班。",
        "我们厂三班倒，我在中班。",
        "I work the early shift at the hospital.",
        "I'm on the graveyard shift this month.",
        "I do weekend shifts at the store.",
    ),
    "class_day": (
        "我的舞蹈课在每周五下午。",
        "孩子的英语课是周六上午。",
        "我每周一晚上上吉他课。",
        "My painting class is on Friday afternoons.",
        "Swim lessons are Saturday mornings for my kid.",
        "I have choir practice every Wednesday night.",
    ),
    "sport": (
        "我平时踢足球锻炼身体。",
        "我主要的运动是跑步。",
        "我每周打几次乒乓球。",
        "I play tennis to stay in shape.",
        "My main sport is cycling.",
        "I do boxing a few times a week.",
    ),
    "band": (
        "我在一个摇滚乐队里当主唱。",
        "我是校乐队的键盘手。",
        "我加入了一个民谣乐团。",
        "I sing in a cover band on weekends.",
        "I'm the drummer in a punk band.",
        "I play keys for a local indie group.",
    ),
    "job": (
        "我是超市的收银员。",
        "我在一家公司做产品经理。",
        "我的工作是幼儿园老师。",
        "I'm a project manager at a software company.",
        "I work as a cashier at a grocery store.",
        "My job is teaching third grade.",
    ),
    "studies": (
        "我的专业是法学。",
        "我在大学读的是生物。",
        "我研究生学的是经济学。",
        "My major is psychology.",
        "I'm studying mechanical engineering in college.",
        "I'm doing a degree in history.",
    ),
    "phone": (
        "我的手机是小米的。",
        "我用的是三星手机。",
        "我手机用的是一部OPPO。",
        "My phone is a Samsung Galaxy.",
        "I use a OnePlus phone.",
        "I've got a Motorola phone.",
    ),
    "commute": (
        "我每天开车上班。",
        "我坐公交去公司。",
        "我走路去上班，十分钟就到。",
        "I take the train to the office.",
        "I walk to work every day.",
        "I drive to my job each morning.",
    ),
    "language_learning": (
        "我在学法语。",
        "我最近开始学德语了。",
        "我在自学西班牙语。",
        "I'm learning German.",
        "I've been studying Korean on an app.",
        "I'm taking French classes.",
    ),
    "home": (
        "我住在成都。",
        "我现在住在城东的一个小区。",
        "我在厦门生活。",
        "I live in Chicago.",
        "We're renting an apartment in Brooklyn.",
        "I've been living in Seattle for a while.",
    ),
    "hometown": (
        "我老家是河南的。",
        "我是在东北长大的。",
        "我是湖南人。",
        "I grew up in Texas.",
        "I'm originally from Manila.",
        "My hometown is a small village in Wales.",
    ),
    "sleep": (
        "我一般晚上十点睡觉。",
        "我每天早上五点半起床。",
        "我习惯凌晨一点才睡。",
        "I usually go to bed around 10pm.",
        "I wake up at 5:30 every day.",
        "I'm asleep by midnight most nights.",
    ),
    "workout_time": (
        "我每天早上去健身房。",
        "我一般下班后去锻炼。",
        "我习惯中午去跑步。",
        "I work out in the mornings before work.",
        "I go to the gym at lunchtime.",
        "I exercise in the evening after dinner.",
    ),
}


def topic_of(scores: dict[str, float]) -> str | None:
    """The topic a statement is about: the nearest, when near enough and clearly nearer than the next."""
    ranked = sorted(((score, label) for label, score in scores.items()), reverse=True)
    (top, label), (second, _) = ranked[0], ranked[1]
    return label if top >= TOPIC_FLOOR and top - second >= TOPIC_MARGIN else None


ONE_AT_A_TIME = frozenset({"car", "school", "shift", "job", "studies", "phone", "commute", "home", "sleep"})
"""Topics a person has one of at a time (most days): a new value there is likely to replace the old
one even when nothing says it changed ("Finally caved and got a Pixel" after "I'm on an old
Samsung"); a sport, a band, a class or a language is added beside the others."""


def one_at_a_time(new: dict[str, float], old: dict[str, float]) -> bool:
    """Both statements are clearly about the same topic (`topic_of`), one of `ONE_AT_A_TIME`."""
    topic = topic_of(new)
    return topic in ONE_AT_A_TIME and topic_of(old) == topic


def same_topic(new: dict[str, float], old: dict[str, float]) -> bool | None:
    """Whether two statements are about the same topic: one has a clear topic and the other is near
    it too (within the margin of its own nearest: 'Switched to a Pixel 8' names no phone, but is
    nearest the phones). None when neither has a clear topic."""
    topics = [t for t in (topic_of(old), topic_of(new)) if t is not None]
    if not topics:
        return None
    for topic in topics:
        for scores in (new, old):
            if scores[topic] < TOPIC_FLOOR or scores[topic] < max(scores.values()) - TOPIC_MARGIN:
                return False
    return True
