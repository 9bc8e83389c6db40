"""Who a statement is about: the user, or someone else (a colleague, a brother, my daughter). Pure,
no numpy: the rules use it as well as the pair classifier."""

import re

_PEOPLE_ZH = (
    "同事|朋友|闺蜜|哥们|室友|同学|舍友|老板|领导|邻居|舅舅|舅妈|叔叔|阿姨|姑姑|姨|表哥|表姐|表弟|表妹|堂哥|堂姐"
    "|老大|老二|老三|老幺|大儿子|小儿子|二儿子|大女儿|小女儿|二女儿|哥哥?|姐姐?|弟弟?|妹妹?|爸爸?|妈妈?|爷爷|奶奶|外公|外婆|姥姥|姥爷|婆婆|公公|岳父|岳母|老公|老婆|对象|男朋友|女朋友"
    "|男友|女友|儿子|女儿|闺女|孩子|娃|宝宝|合伙人|师傅|徒弟|学生|病人|客户|兄弟|姐妹|媳妇|丈夫|妻子|先生|太太|发小|队友"
    "|搭档|上司|实习生|侄子|侄女|外甥|外甥女|孙子|孙女|亲戚|家人"
)
_SOMEONE_ELSE = re.compile(
    rf"^(?:对了|话说|其实|就是)?[，,\s]*(?:我|我的|我们|我家|咱)?(?:[\u4e00-\u9fff]{{0,4}}?有(?:个|一个|位))?"
    rf"(?:[\u4e00-\u9fff]{{0,4}}的)?({_PEOPLE_ZH}|小姑娘|小伙子?|大爷|大妈)"
    r"|^(?:so |oh |btw,? )?(?:my|our|a) (?:\w+ )?(coworker|colleague|friend|bestie|roommate|classmate|boss|neighbou?r|"
    r"uncle|aunt|cousin|brother|sister|mom|mother|dad|father|grandma|grandpa|husband|wife|partner|boyfriend|girlfriend|"
    r"son|daughter|kid|baby|team|manager|patient|client|buddy|pal|fianc[eé]e?|niece|nephew|grandson|granddaughter|"
    r"in-laws?|stepson|stepdaughter|teammate|bandmate|ex|oldest|eldest|youngest|middle one|firstborn)s?\b",
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
    who = (m.group(1) or m.group(2)).lower()
    return PARTNER if who in _PARTNER else who
