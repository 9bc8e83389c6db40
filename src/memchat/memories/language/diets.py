"""A way of eating one keeps to (生酮, 地中海饮食, 轻断食; keto, intermittent fasting, high-protein):
one at a time, so a new one named without an also replaces the old (`slots.read_slots`, slot
`diet_plan`). Someone else's (我同事在搞十六加八轻断食, "my coworker is doing keto") is theirs, and a
plan named after a negation (不吃生酮了) is none. Pure."""

import re

from memchat.memories.language.people import someone_before

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


def diet_plans(text: str) -> dict[str, set[str]]:
    """`diet_plan` (the user's) or `diet_plan:someone` -> the plans named."""
    found: dict[str, set[str]] = {}
    for m in _PLAN.finditer(text):
        if _NEGATED.search(text[max(0, m.start() - 12) : m.start()]):
            continue
        who = someone_before(text, m.start())  # 我同事在搞…, "my coworker is doing ...": theirs
        key = f"diet_plan:{who}" if who else "diet_plan"
        found.setdefault(key, set()).add(str(m.lastgroup).replace("_", "-"))  # the plan's named group
    return found
