"""A memory said again with a changed value in place of the old one. Pure.

A change of mind retires the memory it contradicts. When that memory holds more than the value that
changed ("I'm studying accounting at Ohio State", then "Switched my major to nursing"), retiring it
loses the school with the major; the memory is rewritten instead ("I'm studying nursing at Ohio
State"), and the change is stored beside it as said. Only where the slots read one value of one slot
in each, the two values share no word, the old value stands in the memory's own words, and the memory
fills another slot the change leaves alone; anything less sure retires the memory as before.
"""

import re

from memchat.memories.language.conflicts import analyse
from memchat.memories.language.semantic import first_person

# Slots whose value is a noun that can stand in the old one's place: not a diet, an age or a negation
# ("I'm meat" is no sentence), and not a name (a partner by a new name is another person, and what the
# memory says of the old one, 在银行上班, is not said of the new)
_REPLACEABLE = frozenset({"city", "job", "major", "school", "car"})
# what a change says of when, after its value ("nursing this semester", "计算机了")
_WHEN_AFTER = re.compile(
    r"\s+(?:this|last|next)\s+(?:semester|term|year|month|week|fall|spring|summer|winter)\b.*$"
    r"|\s+(?:now|instead|anymore|already)\b.*$|了$",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_CJK_PAIR = re.compile(r"[\u4e00-\u9fff]{2}")


def _base(key: str) -> str:
    return key.split(":", 1)[0]


def _as_said(value: str, text: str) -> str | None:
    """The value as the text writes it (its own capitals), without the words of when that follow it."""
    value = _WHEN_AFTER.sub("", value).strip()
    at = text.casefold().find(value.casefold())
    return text[at : at + len(value)] if value and at >= 0 else None


def _long_enough(value: str) -> bool:
    return len(value) >= (2 if _CJK.search(value) else 3)


def _share_words(one: str, other: str) -> bool:
    """Two values that share a word, or two CJK characters in a row (上海读研究生 / 同济的研究生):
    the slots read one thing said twice, not a new value."""
    one, other = one.casefold(), other.casefold()
    if set(re.findall(r"[a-z0-9]{3,}", one)) & set(re.findall(r"[a-z0-9]{3,}", other)):
        return True
    return any(one[i : i + 2] in other for i in range(len(one) - 1) if _CJK_PAIR.fullmatch(one[i : i + 2]))


def with_new_value(old_text: str, new_text: str) -> str | None:
    """`old_text` with the one value `new_text` changes put in its place, or None where the change
    does not name exactly one new value of one slot the memory fills, or the memory holds nothing
    else the slots read."""
    old, new = analyse(first_person(old_text)), analyse(first_person(new_text))
    changed = [k for k in old.slots.keys() & new.slots.keys() if old.slots[k] != new.slots[k]]
    untouched = old.slots.keys() - new.slots.keys()
    if len(changed) != 1 or not untouched or _base(changed[0]) not in _REPLACEABLE:
        return None
    if len(old.slots[changed[0]]) != 1 or len(new.slots[changed[0]]) != 1:
        return None
    (before,), (after,) = old.slots[changed[0]], new.slots[changed[0]]
    after_said = _as_said(after, new_text)
    if after_said is None or not (_long_enough(before) and _long_enough(after_said)):
        return None
    if _share_words(before, after_said):
        return None
    stays = [v.casefold() for k in untouched for v in old.slots[k]]
    if any(before.casefold() in v or v in before.casefold() for v in stays):
        return None  # 杭州做程序员: the value that stays holds the one that changed
    folded = old_text.casefold()
    if folded.count(before.casefold()) != 1:
        return None
    at = folded.find(before.casefold())
    return old_text[:at] + after_said + old_text[at + len(before) :]
