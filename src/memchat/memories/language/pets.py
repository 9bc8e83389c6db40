"""A pet the user no longer has. Pure.

我养了一只橘猫叫大橘, then 上周送走了家里的老猫: the memory of having the cat no longer holds, though
the second statement names no value the slots read and often goes on to a new pet (前天领回来一只
小黑狗). The same in English: "We lost our old girl in March", "My ex kept the dog", "RIP to my
little guy". A statement that names the pet (by its name or its kind) and says it is gone (died,
given away, ran off, lives with someone else now) retires the memory of having it.
"""

import re

from memchat.memories.language.people import PEOPLE_ZH

# Each kind of pet and the words for it; a pet is found by any word of its kind.
_KINDS: dict[str, str] = {
    "cat": r"猫(?![粮砂爬抓眼头])|英短|美短|布偶|三花|暹罗|\bcats?\b|\bkitt(?:y|en|ies)\b",
    "dog": (
        r"狗(?![粮绳窝笼屎食血])|柯基|金毛|边牧|柴犬|泰迪|哈士奇|萨摩|拉布拉多|比熊|博美|阿拉斯加|德牧|"
        r"\bdogs?\b|\bpupp(?:y|ies)\b|\bpups?\b|\bbeagle\b|\bhusky\b|\bcorgi\b|\blab\b|\bretriever\b|"
        r"\bterrier\b|\bpoodle\b|\bgreyhound\b|\bdachshund\b|\bshepherd\b|\bpit ?bull\b|\bdoodle\b"
    ),
    "bird": r"鹦鹉|玄凤|虎皮|八哥|\bparrot\b|\bbudgie\b|\bcockatiel\b|\bparakeet\b",
    "rodent": r"仓鼠|龙猫|豚鼠|\bhamster\b|\bgerbil\b|\bguinea pig\b|\bchinchilla\b",
    "rabbit": r"兔子|\brabbit\b|\bbunny\b",
    "reptile": r"乌龟|蜥蜴|守宫|\blizard\b|\bbearded dragon\b|\bgecko\b|\bturtle\b|\btortoise\b|\bsnake\b",
}
_KIND = {kind: re.compile(words, re.IGNORECASE) for kind, words in _KINDS.items()}
# The user has it: 养了 / 有 / 我家 / 我的, "I have", "we've got", "my", "our", "named"
_HAS = re.compile(
    r"养|有[一只条个]|我家|我们家|我的|\b(?:i|we)(?:'ve| have)? (?:got|have|keep|adopted)\b|\bmy\b|\bour\b|\bnamed\b",
    re.IGNORECASE,
)
# Its name: 叫X / 名叫X, "named X", "called X"
_NAME_ZH = re.compile(r"叫([\u4e00-\u9fff]{2,3}?)(?=[，。！!,.\s]|$|的|是|今年)")
_NAME_EN = re.compile(r"\b(?:named|called)\s+((?:Sir\s+)?[A-Z][a-z]+)")
# Gone: died, given or taken away, ran off, lost, kept by someone else
_GONE = re.compile(
    r"送给|送去|送人|送走|送过去|送回|送到[^，。！!,.]{1,8}?(?:养|住)|走了(?![一两几半很好过进出来去])|死了|老死|去世|没了|跑了(?![一两几半很好过进出来去步])|"
    r"丢了|走丢|归了|归他|归她|接走|接去|抱走|抱回|领走|安乐死|不在了|病死"
    r"|\b(?:died|passed away|passed on|put (?:him|her|it) down|put to sleep|ran away|ran off|went missing|"
    r"crossed the rainbow bridge|rehomed|re-homed|rehome|re-home)\b|\brip\b|\blost (?:our|my)\b|\bgave (?:\w+ )?away\b|"
    r"\b(?:kept|took|has|got) (?:the|our|my) (?:\w+ )?(?:dog|cat|pup|puppy|kitty|bird|hamster|rabbit)\b|"
    r"\b(?:lives|living|stays) with (?:my|his|her|their)\b",
    re.IGNORECASE,
)
# someone else's pet: "my neighbor's dog", 邻居家的狗, 朋友的猫
_ANOTHERS = re.compile(
    rf"(?:\b(?!(?:my|our|the)\b)\w+'s\s+(?:\w+\s+)?|(?:{PEOPLE_ZH})家?的?(?:那只|那条|这只)?)$", re.IGNORECASE
)
_PRONOUN = re.compile(r"它|\b(?:old girl|old boy|little guy|little girl|the little one)\b", re.IGNORECASE)


def _kinds(text: str, *, own: bool = False) -> set[str]:
    """The kinds of pet the text names; with `own`, only where it is not someone else's."""
    return {
        kind
        for kind, words in _KIND.items()
        if any(not (own and _ANOTHERS.search(text[max(0, m.start() - 16) : m.start()])) for m in words.finditer(text))
    }


def _names(text: str) -> set[str]:
    return {m.group(1) for m in _NAME_ZH.finditer(text)} | {m.group(1) for m in _NAME_EN.finditer(text)}


def tells_of_a_pet(text: str) -> bool:
    """The text says the user has a pet (我养了一只橘猫叫大橘, "I've got a hamster named Nugget")."""
    return bool(_kinds(text)) and _HAS.search(text) is not None


def no_longer_has(new_text: str, old_text: str) -> bool:
    """`old_text` says the user has a pet, and `new_text` names that pet (its name, its kind, or
    它 / "old girl" where the memory is of one pet) and says it is gone."""
    if _GONE.search(new_text) is None:
        return False  # first: it is asked of every active memory, and most statements say nothing is gone
    kinds = _kinds(old_text)
    if not kinds or _HAS.search(old_text) is None:
        return False
    if any(name in new_text for name in _names(old_text)):
        return True
    return bool(kinds & _kinds(new_text, own=True)) or (len(kinds) == 1 and bool(_PRONOUN.search(new_text)))
