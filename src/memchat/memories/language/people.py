"""Who a statement is about: the user, or someone else (a colleague, a brother, my daughter). Pure,
no numpy: the rules use it as well as the pair classifier."""

import re

PEOPLE_ZH = (
    "同事|朋友|闺蜜|哥们|室友|同学|舍友|老板|领导|邻居|舅舅|舅妈|叔叔|阿姨|姑姑|姨|表哥|表姐|表弟|表妹|堂哥|堂姐"
    "|老大|老二|老三|老幺|大儿子|小儿子|二儿子|大女儿|小女儿|二女儿|哥哥?|姐姐?|弟弟?|妹妹?|爸爸?|妈妈?|爷爷|奶奶|外公|外婆|姥姥|姥爷|婆婆|公公|岳父|岳母|老公|老婆|对象|男朋友|女朋友"
    "|男友|女友|儿子|女儿|闺女|孩子|娃|宝宝|合伙人|师傅|徒弟|学生|病人|客户|兄弟|姐妹|媳妇|丈夫|妻子|先生|太太|发小|队友"
    "|搭档|上司|实习生|侄子|侄女|外甥|外甥女|孙子|孙女|亲戚|家人|店长|组长|班长|店主|老板娘|师父|老伴|老头子|老太婆"
)
# Someone called by surname: 小王, 老李, 王师傅, 李阿姨. Surnames that start common words after
# 小 / 老 (小周末, 老方法, 小金库, 老姜, 小龙虾, 小毛病, 小钱) are left out.
_SURNAME = (
    "王李张刘陈杨赵吴徐孙朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖董袁潘蒋蔡杜程苏魏"
    "吕任沈姚卢崔钟谭陆汪范廖贾韦邹孟熊秦邱薛闫段雷侯陶贺顾郝龚邵严覃戴孔"
)
_BY_SURNAME = f"[小老][{_SURNAME}]|[{_SURNAME}](?:师傅|阿姨|姐|哥|总|经理|叔|婶|主任|老板|大爷|大妈)"
_SOMEONE_ELSE = re.compile(
    rf"^(?:对了|话说|其实|就是)?[，,\s]*(?:我|我的|我们|我家|咱)?(?:那个?|这个?)?"
    rf"(?:[\u4e00-\u9fff]{{0,4}}?有(?:个|一个|位))?"
    rf"(?:[\u4e00-\u9fff]{{0,4}}的|大学|高中|初中|小学|以前的?|之前的?|老(?=哥们|姐妹|同学|同事|朋友))?"
    rf"({PEOPLE_ZH}|小姑娘|小伙子?|大爷|大妈|{_BY_SURNAME})"
    r"|^(?:so |oh |btw,? )?(?:my|our|a) (?:(older|younger|elder|big|little|baby|twin) |(?:\w+ ){1,2})?"
    r"(coworker|colleague|friend|bestie|roommate|classmate|boss|neighbou?r|"
    r"uncle|aunt|cousin|brother|sister|mom|mother|dad|father|grandma|grandpa|husband|wife|partner|boyfriend|girlfriend|"
    r"son|daughter|kid|baby|team|manager|patient|client|buddy|pal|fianc[eé]e?|niece|nephew|grandson|granddaughter|"
    r"in-laws?|stepson|stepdaughter|teammate|bandmate|ex|oldest|eldest|youngest|middle one|firstborn|co-?founder|"
    r"business partner|landlord|landlady|mentor)s?\b",
    re.IGNORECASE,
)


# One partner at a time: my boyfriend Tyler and my fiancé Andre are the same place in a life, and a
# new one replaces the old; so they are one person to compare.
_PARTNER = frozenset(
    "老公 老婆 对象 男朋友 女朋友 男友 女友 媳妇 丈夫 妻子 先生 太太 "
    "husband wife partner boyfriend girlfriend fiance fiancé fiancee fiancée".split()
)
PARTNER = "partner"


def someone_else(text: str) -> str | None:
    """Who a statement is about when it is not the user (我同事去年考的托福, my brother moved to Denver):
    the relation word (`PARTNER` for any word for the user's partner); None for the user. The pair
    classifier compares a user's statements only with the user's, and another person's only with
    the same person's."""
    m = _SOMEONE_ELSE.match(text.strip())
    if m is None:
        return None
    who = (m.group(1) or m.group(3)).lower()
    if who in _PARTNER:
        return PARTNER
    # my older brother and my younger brother are two people; "my brother" may be either
    return f"{m.group(2).lower()} {who}" if m.group(2) and who in _SIBLINGS else who


_SIBLINGS = frozenset("brother sister".split())
_CLAUSE_END = re.compile(r"[.!?;,。！？；，]")


def someone_before(text: str, start: int) -> str | None:
    """Whose is what `text` says at `start`: `someone_else` of its clause up to there (my friend has an
    interview next month; 我同事在搞十六加八轻断食), None for the user's own."""
    return someone_else(_CLAUSE_END.split(text[:start])[-1])


def same_person(a: str | None, b: str | None) -> bool:
    """One person: the same word, or a sibling said with and without older / younger."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    return a.rsplit(" ", 1)[-1] == b.rsplit(" ", 1)[-1] and (" " not in a or " " not in b)


ANYONE_ELSE = "*"
"""In `whom`: a statement about someone a pronoun names (he, she, 他, 她): any other person's memory."""

# After another person's clause, one with the user as its subject: "My sister took the dog, and I
# adopted a cat", "My manager put me on closing" (the user's shift), 室友搬走了，我现在一个人住 (in
# Chinese only beside a word that goes on: 现在, 后来, 所以...; 我爸妈住在绵阳，我每个月回去 is theirs).
_OWN_CLAUSE = re.compile(
    r"(?:[,;:.!?]\s*|\b(?:and|so|but|now|then)\s+)(?:now\s+|these days\s+)?(?:i|i'm|i've|i'd|i'll)\b"
    r"|\b(?:put|moved|got|switched|signed|transferred|hired|made|promoted|gave|handed)\s+me\b"
    r"|[，,；;。！？!?]\s*(?:(?:现在|后来|所以|然后|于是|如今)我(?![爸妈哥姐弟妹家们])|我(?:现在|后来|已经|就))",
    re.IGNORECASE,
)
# A clause whose subject is a pronoun for another person: "She matched for fellowship in Sacramento",
# "We moved across town and he started at Westbrook", 他下个月调去深圳.
_PRONOUN_CLAUSE = re.compile(
    r"^(?:so |oh |and |but )?(?:he|she|he's|she's)\b|(?:[,;:]\s*|\b(?:and|so|but)\s+)(?:he|she|he's|she's)\b"
    r"|^[他她](?![们人])|[，,；;]\s*[他她](?![们人])",
    re.IGNORECASE,
)


def whom(text: str) -> frozenset[str | None]:
    """Whose memories a statement may change or repeat: `someone_else`'s answer, and also the user's
    when a later clause has the user as its subject ("My sister took the dog, and I adopted a cat"),
    and any other person's (`ANYONE_ELSE`) when a clause's subject is he or she ("He retired, and the
    practice passed me to Renee" may still be the user's own)."""
    text = text.strip()
    who = someone_else(text)
    found: set[str | None] = {who}
    if who is not None and _OWN_CLAUSE.search(text):
        found.add(None)
    if _PRONOUN_CLAUSE.search(text):
        found.add(ANYONE_ELSE)
    return frozenset(found)


def may_be_about(new: frozenset[str | None], old: frozenset[str | None]) -> bool:
    """Whether a new statement about `new` may change or repeat a memory about `old` (`whom` of each).
    A pronoun counts on the new statement's side only: "He moved to Reno" may be the dad of "My dad
    lives in Fresno", but a memory that says "she" somewhere ("taking my daughter for her shot, she's
    12 months") is not thereby anyone's."""
    if any(same_person(a, b) for a in new for b in old - {ANYONE_ELSE}):
        return True
    return ANYONE_ELSE in new and any(w not in (None, ANYONE_ELSE) for w in old)
