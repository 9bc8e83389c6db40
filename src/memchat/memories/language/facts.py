"""One fact per memory: a statement that says several things is cut into the facts it holds. Pure.

我叫小林，我住在杭州 holds a name and a city; stored as one memory, a later 我搬到上海了 would
archive the name with the city. It is cut where a clause starts a new slot (name, city, job, age,
schedule...): 我叫小林 / 我住在杭州. A clause that fills no slot stays with the clause before it
(我住在杭州，离西湖很近 is one fact), and a statement with fewer than two slot-filling clauses is
left whole. The same for English ("I'm Dana and I teach math" -> "I'm Dana" / "I teach math").
"""

import re

from memchat.memories.language.pets import tells_of_a_pet
from memchat.memories.language.slots import read_slots

# where a clause may end: a comma or semicolon (with the "and" after it: "I'm Bea, and my dog is..."),
# or an English "and"/"but" before a new subject
_CLAUSE_END = re.compile(
    r"\s*[，,；;、]\s*(?:(?:and|but|plus)\s+(?=(?:i|i'm|i've|my|we|we're)\b))?"
    r"|\s+(?:and|but|plus)\s+(?=(?:i|i'm|i've|my|we|we're)\b)",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_VERB = re.compile(
    r"\b(?:am|is|are|was|were|have|has|had|do|does|did|live|lived|work|worked|teach|taught|study|go|went|like|love|"
    r"hate|moved|got|manage|run|own|need|want|play|drive|eat|drink|grew|born|came|left|took|made|met|bought|sold|"
    r"know|knew|keep|kept)\b|'m\b|'s\b|'re\b|'ve\b|\w+ed\b",
    re.IGNORECASE,
)
_SUBJECT = re.compile(r"^(?:我|i\b|i'm\b|my\b|we\b|we're\b)", re.IGNORECASE)
_LOWER_SUBJECT = re.compile(r"^(?:i|i'm|i've|my|our|we|we're)\b")


def _clauses(text: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for m in _CLAUSE_END.finditer(text):
        if m.group(0).strip() and m.group(0).strip()[0].isalpha() and not _VERB.search(text[start : m.start()]):
            continue  # "My boyfriend Tyler and I have been together": the "and" joins two subjects
        if m.start() > start:
            parts.append(text[start : m.start()])
        start = m.end()
    if start < len(text):
        parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


# A clause whose subject is someone else (孩子在读中班, my son's in daycare): a fact of its own.
_OTHER_SUBJECT = re.compile(
    r"^(?:我家)?(?:孩子|儿子|女儿|闺女|老公|老婆|对象|男朋友|女朋友|爸爸?|妈妈?|我爸|我妈|哥哥?|姐姐?|弟弟?|妹妹?|爷爷|奶奶)"
    r"|^(?:my|our)\s+(?:son|daughter|kids?|husband|wife|partner|boyfriend|girlfriend|mom|dad|brother|sister)\b",
    re.IGNORECASE,
)
# A clause that starts with who it is about (我, I, my...): it does not go on about the person before it.
_OWN_SUBJECT = re.compile(r"^(?:我|i\b|i'm\b|my\b|we\b|we're\b|our\b)", re.IGNORECASE)


def _about_someone_else(clause: str) -> bool:
    """A clause about a relative or a partner (我女朋友叫小雨, my son's in daycare)."""
    return bool(_OTHER_SUBJECT.match(re.sub(r"^我(?=家|[^家])", "", clause, count=1)))


# Who one is (a name, an age): said in a few words, so what follows it is another fact.
_IDENTITY = frozenset({"name", "age"})
_SUBSTANTIVE = 4

_REFERS_BACK = re.compile(r"[这那它]|\b(?:it|there|that|this|they|them)\b", re.IGNORECASE)


def _stands_alone(clause: str) -> bool:
    """A clause with its own subject that points at nothing said before it (我喜欢吃辣, not 我很喜欢这里)."""
    return bool(_SUBJECT.match(clause)) and not _REFERS_BACK.search(clause)


def _starts_another_fact(clause: str, before: set[str]) -> bool:
    """A clause after a name or an age that says something more (我叫小满，在昆明做前台)."""
    if not before:
        return False
    return before <= _IDENTITY and len(re.sub(r"\W", "", clause)) >= _SUBSTANTIVE


def _slot_names(clause: str) -> frozenset[str]:
    """The slots a clause fills, read as said by the user (是一名护士 as 我是一名护士)."""
    if _CJK.search(clause) and not _SUBJECT.match(clause):
        clause = "我" + clause
    return frozenset(read_slots(clause)[0])


def split_facts(text: str) -> list[str]:
    """The facts `text` states, each a statement of its own; `[text]` when it states one (or none)."""
    clauses = _clauses(text)
    if len(clauses) < 2:
        return [text]
    groups: list[tuple[list[str], set[str]]] = []
    for clause in clauses:
        about = groups[-1][0][0] if groups else ""
        if groups and (_about_someone_else(about) or tells_of_a_pet(about)) and not _OWN_SUBJECT.match(clause):
            # 我女儿叫朵朵，今年五岁: the age is the daughter's, and so is all that follows without a subject
            # (我养了一只橘猫叫大橘，十四岁了: the cat's)
            groups[-1][0].append(clause)
            continue
        slots = _slot_names(clause)
        new_slot = bool(slots) and bool(groups) and bool(groups[-1][1]) and not slots <= groups[-1][1]
        someone_else = bool(groups) and bool(_OTHER_SUBJECT.match(clause))
        new_subject = someone_else or (
            bool(groups)
            and bool(groups[-1][1])
            and (_stands_alone(clause) or _starts_another_fact(clause, groups[-1][1]))
        )
        if groups and not new_slot and not new_subject and (not slots or not groups[-1][1] or slots <= groups[-1][1]):
            groups[-1][0].append(clause)
            groups[-1][1].update(slots)
        else:
            groups.append(([clause], set(slots)))
    about_others = any(_OTHER_SUBJECT.match(parts[0]) for parts, _ in groups[1:])
    if len(groups) < 2 or not (about_others or any(slots for _, slots in groups)):
        return [text]
    if not groups[0][1] and len(re.sub(r"\W", "", "".join(groups[0][0]))) < _SUBSTANTIVE:
        # a lead-in without a slot ("对了，") goes with the first fact
        lead, _ = groups.pop(0)
        groups[0] = ([*lead, *groups[0][0]], groups[0][1])
    chinese = bool(_CJK.search(text))
    facts: list[str] = []
    for parts, _ in groups:
        fact = ("，" if chinese else ", ").join(parts).rstrip("。.!！")
        if chinese and text.startswith("我") and not _SUBJECT.match(fact):
            fact = "我" + fact  # 我叫小林，今年25岁 -> 我今年25岁
        fact = _LOWER_SUBJECT.sub(lambda m: m.group(0).capitalize(), fact)  # "..., and my dog is" -> "My dog is"
        facts.append(fact + ("。" if chinese else "."))
    return facts
