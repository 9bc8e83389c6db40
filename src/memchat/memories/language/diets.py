"""A way of eating one keeps to (生酮, 地中海饮食, 轻断食; keto, intermittent fasting, high-protein):
one at a time, so a new one named without an also replaces the old (`slots.read_slots`, slot
`diet_plan`). Someone else's (我同事在搞十六加八轻断食, "my coworker is doing keto") is theirs, and a
plan named after a negation (不吃生酮了) is none. Pure."""

import re

_PLANS = (
    ("keto", r"生酮|\bketo(?:genic)?\b"),
    ("mediterranean", r"地中海(?:饮食|餐)?|\bmediterranean(?: diet)?\b"),
    ("fasting", r"轻断食|间歇性断食|十六加八|16\s*[+:：]\s*8|\bintermittent fasting\b"),
    ("low-carb", r"低碳(?:水)?(?:饮食)?|\blow[- ]carb\b"),
    ("high-protein", r"高蛋白(?:饮食|餐)?|\bhigh[- ]protein\b"),
    ("paleo", r"\bpaleo\b"),
    ("whole30", r"\bwhole ?30\b"),
)
_PLAN = re.compile("|".join(f"(?P<{name.replace('-', '_')}>{pattern})" for name, pattern in _PLANS), re.IGNORECASE)
_NEGATED = re.compile(
    r"(?:不再|不吃|不搞|不做|没再|别|stopped|quit|gave up(?: on)?|no more|not doing|done with|off)\s*(?:the\s+)?$",
    re.IGNORECASE,
)
# whose plan: a relative, a friend or a colleague named just before it (中文 8 characters, English 40)
_SOMEONE = re.compile(
    r"(?:我|俺)?(?:同事|朋友|闺蜜|室友|老婆|老公|对象|男朋友|女朋友|妈|爸|姐|哥|弟|妹|舅|姨|婆|爷|奶|叔|表姐|表哥|邻居|领导|老板)"
    r"|\b(?:my|our)\s+(?:\w+\s+)?(?:coworker|co-worker|friend|roommate|wife|husband|partner|girlfriend|boyfriend|mom|"
    r"dad|mother|father|sister|brother|aunt|uncle|cousin|boss|neighbou?r|son|daughter)s?\b|\b(?:she|he|they)\b",
    re.IGNORECASE,
)

_OWNER = re.compile(r"^(?:我|俺|(?:my|our)\s+)", re.IGNORECASE)


def diet_plans(text: str) -> dict[str, set[str]]:
    """`diet_plan` (the user's) or `diet_plan:someone` -> the plans named."""
    found: dict[str, set[str]] = {}
    for m in _PLAN.finditer(text):
        before = text[max(0, m.start() - 40) : m.start()]
        if _NEGATED.search(before[-12:]):
            continue
        cjk_before = before[-8:]
        someone = _SOMEONE.search(cjk_before if re.search(r"[\u4e00-\u9fff]", cjk_before) else before)
        key = f"diet_plan:{_OWNER.sub('', someone.group(0)).lower()}" if someone else "diet_plan"
        found.setdefault(key, set()).add(next(name for name, value in m.groupdict().items() if value).replace("_", "-"))
    return found
