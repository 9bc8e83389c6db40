"""One fact per memory: a statement that says several things is cut into the facts it holds. Pure.

我叫小林，我住在杭州 holds a name and a city; stored as one memory, a later 我搬到上海了 would
archive the name with the city. It is cut where a clause starts a new slot (name, city, job, age,
schedule...): 我叫小林 / 我住在杭州. A clause that fills no slot stays with the clause before it
(我住在杭州，离西湖很近 is one fact), and a statement with fewer than two slot-filling clauses is
left whole. The same for English ("I'm Dana and I teach math" -> "I'm Dana" / "I teach math").
"""

import re

from memchat.memories.language.people import someone_else as whose_fact
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
    r"know|knew|keep|kept|lives|works|teaches|studies|goes|likes|loves|hates|drives|owns|runs|plays|eats|drinks|"
    r"takes|gets|makes|wants|needs|keeps|stays)\b|'m\b|'s\b|'re\b|'ve\b|\w+ed\b",
    re.IGNORECASE,
)
_SUBJECT = re.compile(r"^(?:我|i\b|i'm\b|my\b|we\b|we're\b)", re.IGNORECASE)
_LOWER_SUBJECT = re.compile(r"^(?:i|i'm|i've|my|our|we|we're)\b")


_AND = re.compile(r"\b(?:and|plus)\b", re.IGNORECASE)


def _clauses(text: str) -> list[tuple[str, bool]]:
    """The clauses of `text`, each with whether an English "and" joins it to the one before."""
    parts: list[tuple[str, bool]] = []
    start, joined = 0, False
    for m in _CLAUSE_END.finditer(text):
        if m.group(0).strip() and m.group(0).strip()[0].isalpha() and not _VERB.search(text[start : m.start()]):
            continue  # "My boyfriend Tyler and I have been together": the "and" joins two subjects
        if m.start() > start:
            parts.append((text[start : m.start()], joined))
        start, joined = m.end(), bool(_AND.search(m.group(0)))
    if start < len(text):
        parts.append((text[start:], joined))
    return [(p.strip(), j) for p, j in parts if p.strip()]


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


# What ties a clause to the one before it beyond _REFERS_BACK: a person named before (她), "also",
# a view of what was just said (我觉得挺难的, "I think"), a change told in two clauses ("not anymore,
# I eat fish again")
_TIED_BACK = re.compile(
    r"[他她也还又再]|觉得|感觉|认为|现在|不再|改|换"
    r"|\b(?:he|she|him|her|also|too|either|think|feel|guess|mean|again|anymore|instead|now|no longer)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z']+")
# words that say nothing of their own ("I go every weekend" says no more than when)
_LIGHT = frozenset(
    "i i'm im am is are was were a an the to of in on at for go going went do it every each day days week weeks "
    "weekend weekends night nights morning mornings time always usually often really so very just now then there "
    "here my me we we're our all much lot lots and or but".split()
)
_SAYS_ENOUGH = 1  # English words beyond _LIGHT: more than this
_CJK_ENOUGH = 5  # characters after 我


def _whole_fact(clause: str) -> bool:
    """A clause that says a thing of its own: its own first-person subject, enough words of its own
    (I'm allergic to penicillin, 我对青霉素过敏; not "I go every weekend"), nothing that points back."""
    if not _stands_alone(clause) or _TIED_BACK.search(clause):
        return False
    if _CJK.search(clause):
        return len(_CJK.findall(clause)) > _CJK_ENOUGH
    return sum(w not in _LIGHT for w in _WORD.findall(clause.lower())) > _SAYS_ENOUGH


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
    for clause, joined_by_and in clauses:
        about = groups[-1][0][0] if groups else ""
        if groups and (_about_someone_else(about) or tells_of_a_pet(about)) and not _OWN_SUBJECT.match(clause):
            # 我女儿叫朵朵，今年五岁: the age is the daughter's, and so is all that follows without a subject
            # (我养了一只橘猫叫大橘，十四岁了: the cat's)
            groups[-1][0].append(clause)
            continue
        slots = _slot_names(clause)
        new_slot = bool(slots) and bool(groups) and bool(groups[-1][1]) and not slots <= groups[-1][1]
        someone_else = bool(groups) and bool(_OTHER_SUBJECT.match(clause))
        # 我老公在深圳做程序员，我在广州当老师: back to the user's own slot after someone else;
        # "I take lisinopril every morning, and I'm allergic to sulfa": two things of one's own joined
        # by "and" (a comma often joins what goes on about the first: "I'm into woodworking, I built
        # our table", "I can't eat gluten, I have celiac")
        own_again = (
            bool(groups)
            and len(groups[-1][0]) == 1
            and _whole_fact(clause)
            and (
                (_about_someone_else(groups[-1][0][0]) and bool(slots))
                or (joined_by_and and _whole_fact(groups[-1][0][0]) and whose_fact(groups[-1][0][0]) is None)
            )
        )
        new_subject = (
            someone_else
            or own_again
            or (
                bool(groups)
                and bool(groups[-1][1])
                and (_stands_alone(clause) or _starts_another_fact(clause, groups[-1][1]))
            )
        )
        if groups and not new_slot and not new_subject and (not slots or not groups[-1][1] or slots <= groups[-1][1]):
            groups[-1][0].append(clause)
            groups[-1][1].update(slots)
        else:
            groups.append(([clause], set(slots)))
    about_others = any(_OTHER_SUBJECT.match(parts[0]) for parts, _ in groups[1:])
    whole = all(len(parts) == 1 and _whole_fact(parts[0]) for parts, _ in groups[1:])
    if len(groups) < 2 or not (about_others or whole or any(slots for _, slots in groups)):
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
