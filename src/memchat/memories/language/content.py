"""What a v2 memory says: the user's statement without the command or filler around it. Pure.

记住我周末喜欢爬山 is stored as 我周末喜欢爬山: the request to remember (记住, 帮我记一下, 你要记得),
the "from now on" (以后, 从现在开始) and the chat filler (对了, 嗯, 哈哈) go, the user's own words
stay; nothing is added. The same for English ("remember that I'm vegan" -> "I'm vegan"). The v1
rules keep the whole text (docs/behaviour.md).
"""

import re

from memchat.memories.language.rules import MAX_MEMORY_CHARS
from memchat.text import normalize

_SEP = r"[\s,，、:：!！~～]*"
# said before the statement; repeated ("对了，记住，以后...") so taken off one after another
_LEADING = re.compile(
    r"^(?:"
    r"(?:请你|请|麻烦你?|你)?(?:帮我|给我)?(?:记住|记一下|记下来?|记好了?|记着|记得|记清楚)(?:了|哦|啊|呀)?"
    r"|你要记得|你得记住|要记住|别忘了|不要忘了|你别忘了|提醒你一下"
    r"|(?:以后|今后|往后|之后|从今以后)(?![的再])|从现在开始|从现在起|从今天开始|从今天起"
    r"|对了|另外|还有|顺便说一下|顺便说一句|说一下|(?:我?跟你|我?和你)说(?:一声|一下|个事)?|(?:我?告诉你)(?:一声|一下)?|我想说"
    r"|嗯+|哦+|噢+|啊+|哈+|好吧|好的|其实吧|话说"
    r")" + _SEP
)
# said after it: "..., 记住了吗", "...，记一下哦"
_TRAILING = re.compile(
    r"[,，。!！~～\s]*(?:你)?(?:要)?(?:记住|记一下|记好|记下来?|记着|别忘了)(?:了吗|了没|哦|啊|呀|了|吧)?[。!！~～?？]*$"
)


# the same in English, for the `en` prototypes' language: "remember that ...", "btw, from now on ..."
_LEADING_EN = re.compile(
    r"^(?:(?:please |can you |could you )?(?:remember|don't forget|do not forget|keep in mind|note)(?: that)?"
    r"|just so you know|fyi|btw|by the way|oh and|anyway|from now on|going forward)\b[\s,:;!.-]*",
    re.IGNORECASE,
)
# "also" stays: it says the statement adds to what was said, never replacing it (`conflicts.analyse`)
_TRAILING_EN = re.compile(r"\s*[,;.!-]\s*(?:remember that|remember|ok|okay|got it)\s*[?!.]*$", re.IGNORECASE)


def clean_content(text: str | None) -> str | None:
    """The statement to store, at most MAX_MEMORY_CHARS; None when nothing but filler is left."""
    value = normalize(text)
    if value is None:
        return None
    previous = None
    while previous != value:
        previous = value
        value = _LEADING.sub("", value, count=1)
        value = _TRAILING.sub("", value)
        value = _LEADING_EN.sub("", value, count=1)
        value = _TRAILING_EN.sub("", value) if value.isascii() else value
        value = value.strip(" ，,、：:；;")
    if not value or not re.search(r"[\w\u4e00-\u9fff]", value):
        return None
    return value[:MAX_MEMORY_CHARS]
